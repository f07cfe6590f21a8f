import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { CoreRouter } from "./core-router.ts";
import { fallbackPool } from "./fallback-pool.ts";

const ORIGINS = 4;
const pool = parsePool({
  origins: Array.from({ length: ORIGINS }, (_, i) => ({
    id: `gpu-${i}`,
    url: `http://g${i}.test`,
  })),
  policy: policyOf("cost"),
});

/**
 * Turn `turn` of conversation `c` as the Mooncake conversation trace has it: a 512-token block
 * (8 chunks) every request shares, then the conversation's own chunks, 4 more per turn.
 */
function turnOf(c: number, turn: number) {
  const hashes: number[] = [];
  let h = 17;
  for (let i = 0; i < 8 + 4 * (turn + 1); i++) {
    h = chainHash(h, i < 8 ? i : c * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: hashes.length * 64 };
}

describe("fallbackPool", () => {
  it("bug: prefix-hash over the first 256 tokens sent every conversation-trace request (one shared 512-token block) to one origin", () => {
    const router = new CoreRouter(fallbackPool(pool), { model: "m", seed: 1 });
    const perOrigin = new Map<string, number>();
    const homes = new Map<number, Set<string>>();
    let now = 0;
    // 40 conversations of 3 turns, interleaved; each request ends before the next arrives, so
    // prefix-hash's bounded load never overflows and its key alone decides.
    for (let turn = 0; turn < 3; turn++) {
      for (let c = 0; c < 40; c++) {
        const d = router.route(turnOf(c, turn), now);
        const origin = d.origin as string;
        now += 10;
        router.complete(d.ticket as string, { ok: true }, now);
        perOrigin.set(origin, (perOrigin.get(origin) ?? 0) + 1);
        if (!homes.has(c)) homes.set(c, new Set());
        homes.get(c)?.add(origin);
      }
    }
    // Spread: no origin takes twice its share (before the fix: all 120 on one origin).
    expect(perOrigin.size).toBe(ORIGINS);
    for (const n of perOrigin.values()) expect(n).toBeLessThanOrEqual((2 * 120) / ORIGINS);
    // Sticky: once the shared block is known as shared (prompts branch under it and `sharedHeat`,
    // 4 requests, warmed it), a conversation's turns all go to one origin; the first few
    // conversations may move once.
    for (let c = 8; c < 40; c++) expect(homes.get(c)?.size, `conversation ${c}`).toBe(1);
  });

  it("is prefix-hash with a small index, whatever the pool's policy", () => {
    const fb = fallbackPool(pool);
    expect(fb.policy.type).toBe("prefix-hash");
    expect(fb.indexMaxChunks).toBeLessThanOrEqual(10_000);
  });
});
