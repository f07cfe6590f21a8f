/**
 * The edge protocol tests' prompts and their convergence check: turn `t` of conversation `c`
 * under one of three system prompts, and "every replica's index reads what the coordinator's
 * does" over the conversations those tests route.
 */
import { expect } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import type { CoreRouter } from "../router/core-router.ts";
import { indexReader } from "./held-by.ts";

/** Turn `t` of conversation `c` under system prompt `c % 3`: 4 shared chunks, 2 per turn. */
export function prompt(c: number, t: number) {
  const hashes: number[] = [];
  let h = 11 + (c % 3);
  for (let i = 0; i < 4 + 2 * (t + 1); i++) {
    h = chainHash(h, i < 4 ? i : c * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: hashes.length * 64 + 7 };
}

/** Each replica's index holds, for turns 0-3 of conversations 0-7, what the coordinator's does. */
export function expectConverged(
  replicas: readonly { readonly isolate: string; readonly router: CoreRouter }[],
  coordinator: CoreRouter,
): void {
  const truth = indexReader(coordinator);
  for (const r of replicas) {
    const read = indexReader(r.router);
    for (let c = 0; c < 8; c++) {
      for (let t = 0; t < 4; t++) {
        const hashes = prompt(c, t).chunkHashes;
        expect(read(hashes), `${r.isolate} conversation ${c} turn ${t}`).toEqual(truth(hashes));
      }
    }
  }
}
