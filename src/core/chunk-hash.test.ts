import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chainHash, chunkHashes, seedHash } from "./chunk-hash.ts";

const aligned = (bytes: number[]) => {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out;
};

describe("chunkHashes", () => {
  it("hash i depends on chunks 0..i only: a byte prefix gives a hash prefix", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.uint8Array({ maxLength: 600 }),
        (a, more) => {
          const ha = chunkHashes(aligned([...a]), 64, 7);
          const hb = chunkHashes(aligned([...a, ...more]), 64, 7);
          expect(Array.from(hb.slice(0, ha.length))).toEqual(Array.from(ha));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("changing one byte changes that chunk's hash and every later one", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 640, maxLength: 640 }), fc.nat(639), (bytes, at) => {
        const before = chunkHashes(aligned([...bytes]), 64, 1);
        const flipped = aligned([...bytes]);
        flipped[at] = (flipped[at] as number) ^ 1;
        const after = chunkHashes(flipped, 64, 1);
        const first = Math.floor(at / 64);
        for (let i = 0; i < before.length; i++) {
          if (i < first) expect(after[i]).toBe(before[i]);
          else expect(after[i]).not.toBe(before[i]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("the seed separates chains, and values are 53-bit safe integers", () => {
    const bytes = aligned(Array.from({ length: 512 }, (_, i) => i & 255));
    const a = chunkHashes(bytes, 64, seedHash("model:a"));
    const b = chunkHashes(bytes, 64, seedHash("model:b"));
    for (let i = 0; i < a.length; i++) {
      expect(a[i]).not.toBe(b[i]);
      expect(Number.isSafeInteger(a[i])).toBe(true);
    }
  });

  it("no collisions among 200k chained values and many similar chunks", () => {
    const seen = new Set<number>();
    let h = 0;
    for (let i = 0; i < 100_000; i++) {
      h = chainHash(h, i);
      seen.add(h);
      seen.add(chainHash(12345, i));
    }
    expect(seen.size).toBe(200_000);
    // Chunks differing in a single word position or value must differ.
    const words = new Uint32Array(16);
    const hashes = new Set<number>();
    for (let pos = 0; pos < 16; pos++) {
      for (let v = 1; v <= 500; v++) {
        words.fill(0);
        words[pos] = v;
        hashes.add(chunkHashes(new Uint8Array(words.buffer), 64, 0)[0] as number);
      }
    }
    expect(hashes.size).toBe(16 * 500);
  });
});
