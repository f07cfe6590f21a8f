import { describe, expect, it } from "vitest";
import { fleetOracleHitRate, infiniteOracleHitRate } from "./oracle.ts";
import type { Workload } from "./workload.ts";

/** A workload with 4-token chunks whose hashes are given directly. */
function workload(prompts: { tokens: number; hashes: number[] }[]): Workload {
  const hashStart = new Int32Array(prompts.length + 1);
  prompts.forEach((p, i) => {
    hashStart[i + 1] = (hashStart[i] as number) + p.hashes.length;
  });
  return {
    model: "m",
    chunkTokens: 4,
    size: prompts.length,
    arrivalMs: new Float64Array(prompts.length),
    promptTokens: Int32Array.from(prompts, (p) => p.tokens),
    outputTokens: new Int32Array(prompts.length).fill(1),
    hashStart,
    hashes: Float64Array.from(prompts.flatMap((p) => p.hashes)),
    timeScale: 1,
  };
}

// Hand-computed with 4-token chunks; prompt tokens 10 + 12 + 9 + 8 + 10 = 49. Cached tokens:
// r1 [1,2]: 0. r2 [1,2,3] (12 tokens, at most 11 cached): 2 chunks = 8. r3 [1,9]: [1] = 4.
// r4 [5,6]: 0. r5 [1,2]: 8 with an infinite cache. Total 20 / 49.
// LRU of 3 chunks (freed tails go first): r3 evicts 3 for 9, r4 evicts 2 and 9 for 5 and 6, so
// r5 finds only [1]: 16 / 49. With 5 chunks r4 takes the unused block and evicts 3, so r5
// finds [1,2] again: 20 / 49.
const HAND = workload([
  { tokens: 10, hashes: [1, 2] },
  { tokens: 12, hashes: [1, 2, 3] },
  { tokens: 9, hashes: [1, 9] },
  { tokens: 8, hashes: [5, 6] },
  { tokens: 10, hashes: [1, 2] },
]);

describe("oracles", () => {
  it("infinite cache: leading chunks seen before, never the last token", () => {
    expect(infiniteOracleHitRate(HAND)).toBeCloseTo(20 / 49, 12);
    const repeated = workload([
      { tokens: 8, hashes: [1, 2] },
      { tokens: 8, hashes: [1, 2] },
    ]);
    // A prompt repeated exactly: all but its last chunk (vLLM recomputes the last token).
    expect(infiniteOracleHitRate(repeated)).toBeCloseTo(4 / 16, 12);
  });

  it("fleet LRU: the same through one bounded LRU cache", () => {
    expect(fleetOracleHitRate(HAND, 3)).toBeCloseTo(16 / 49, 12);
    expect(fleetOracleHitRate(HAND, 5)).toBeCloseTo(20 / 49, 12);
  });
});
