import { describe, expect, it } from "vitest";
import { chainHash } from "../../src/core/chunk-hash.ts";
import { chunkHashesOf } from "./chunk-hashes.ts";

function hashes(ids: number[], blockTokens: number, input: number, chunkTokens: number) {
  const out = new Float64Array(Math.floor(input / chunkTokens));
  const n = chunkHashesOf(ids, blockTokens, input, chunkTokens, 42, out);
  return Array.from(out.subarray(0, n));
}

describe("chunkHashesOf", () => {
  it("cuts a 512-token block into 8 chained 64-token chunks, only full chunks counting", () => {
    const h = hashes([7, 9], 512, 512 + 100, 64);
    expect(h).toHaveLength(9);
    let expected = 42;
    for (let u = 0; u < 8; u++) expected = chainHash(expected, 7 * 8 + u);
    expect(h[7]).toBe(expected);
    expect(h[8]).toBe(chainHash(expected, 9 * 8));
  });

  it("gives equal hash prefixes exactly for equal block-id prefixes", () => {
    const a = hashes([1, 2, 3], 512, 1536, 64);
    const b = hashes([1, 2, 4], 512, 1536, 64);
    const c = hashes([5, 2, 3], 512, 1536, 64);
    expect(b.slice(0, 16)).toEqual(a.slice(0, 16));
    expect(b[16]).not.toBe(a[16]);
    // A different first block changes every hash after it, though later ids are equal.
    expect(c.some((h, i) => h === a[i])).toBe(false);
  });

  it("folds several small blocks into one chunk when chunks are larger", () => {
    const h = hashes([1, 2, 3, 4], 64, 256, 128);
    expect(h).toHaveLength(2);
    expect(h[0]).toBe(chainHash(chainHash(42, 1), 2));
    expect(hashes([1, 2, 9, 9], 64, 256, 128)[0]).toBe(h[0]);
  });

  it("rejects block and chunk sizes that do not nest", () => {
    expect(() => hashes([1], 96, 96, 64)).toThrow(/must nest/);
  });
});
