/** Example tests of the radix index, one behaviour each, plus option and argument validation. */

import { serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { RadixIndex } from "./radix-index.ts";

function depths(index: RadixIndex, hashes: number[], origins = 4): number[] {
  const out = new Int32Array(origins);
  index.match(hashes, out);
  return [...out];
}

function fresh(maxChunks = 1000): RadixIndex {
  return new RadixIndex({ maxOrigins: 4, maxChunks });
}

describe("RadixIndex structure", () => {
  it("splits a node when a request diverges in its middle", () => {
    const index = fresh();
    index.insert([1, 2, 3, 4], 0, 1);
    index.insert([1, 2, 9], 1, 2);
    index.checkInvariants();
    expect(index.stats()).toMatchObject({ nodes: 3, chunks: 5, ownerships: 7, entries: 4 });
    expect(depths(index, [1, 2, 3, 4])).toEqual([4, 2, 0, 0]);
    expect(depths(index, [1, 2, 9, 10])).toEqual([2, 3, 0, 0]);
  });

  it("splits a node when a request ends inside it, so the touch covers whole nodes", () => {
    const index = fresh();
    index.insert([1, 2, 3, 4], 0, 1);
    index.insert([1, 2], 0, 2);
    expect(index.stats().nodes).toBe(2);
    // [1, 2] is now more recent than [3, 4], so capacity 2 evicts the old deeper part.
    expect(index.setCapacity(0, 2)).toEqual([{ origin: 0, chunks: 2 }]);
    expect(depths(index, [1, 2, 3, 4])).toEqual([2, 0, 0, 0]);
    index.checkInvariants();
  });

  it("returns the longest match over all origins even past out.length, and zeroes out", () => {
    const index = fresh();
    index.insert([1, 2, 3], 3, 1);
    const out = new Int32Array(2).fill(9);
    expect(index.match([1, 2, 3, 4], out)).toBe(3);
    expect([...out]).toEqual([0, 0]);
  });
});

describe("RadixIndex pathOf", () => {
  it("returns a packed array, so a seed's sync bytes do not depend on V8's inline caches", () => {
    // A holey path (new Array(n)) once made every array its reads saw holey too (a polymorphic
    // keyed load transitions its receiver), and V8's serializer, which Workers RPC and the edge
    // benchmark's byte counts use, writes a holey array sparsely: replays differed by bytes.
    const index = fresh();
    index.insert([1e15, 2e15, 3e15, 4e15], 0, 1);
    index.insert([1e15, 2e15, 5e15], 1, 2);
    const path = index.pathOf(4e15) as number[];
    expect(path).toEqual([1e15, 2e15, 3e15, 4e15]);
    // After the 0xff version and its byte, "A" opens a dense array, "a" a sparse one.
    expect(String.fromCharCode(serialize(path)[2] as number)).toBe("A");
  });
});

describe("RadixIndex ownership", () => {
  it("removeOrigin frees unshared chunks but keeps shared ones", () => {
    const index = fresh();
    index.insert([1, 2, 3], 0, 1);
    index.insert([1, 2, 7, 8], 1, 2);
    expect(index.removeOrigin(1)).toBe(4);
    expect(index.stats()).toMatchObject({ chunks: 3, ownerships: 3 });
    expect(depths(index, [1, 2, 7, 8])).toEqual([2, 0, 0, 0]);
    expect(index.capacity(1)).toBe(Number.POSITIVE_INFINITY);
    index.checkInvariants();
  });

  it("truncate drops the chunk at `keep` and the origin's whole subtree below it", () => {
    const index = fresh();
    index.insert([1, 2, 3, 4], 0, 1);
    index.insert([1, 2, 5], 0, 2);
    index.insert([1, 2, 3, 4], 1, 3);
    expect(index.truncate([1, 2, 3, 4], 0, 1)).toBe(4);
    expect(depths(index, [1, 2, 3, 4])).toEqual([1, 4, 0, 0]);
    expect(depths(index, [1, 2, 5])).toEqual([1, 2, 0, 0]);
    expect(index.stats().chunks).toBe(4);
    expect(index.truncate([1, 2, 3, 4], 0, 4)).toBe(0);
    index.checkInvariants();
  });
});

describe("RadixIndex eviction", () => {
  it("evicts the least recently used leaves first", () => {
    const index = fresh();
    index.insert([1, 2], 0, 1);
    index.insert([1, 3], 0, 2);
    index.insert([1, 4], 0, 3);
    index.insert([1, 2], 0, 4); // touch [1, 2]: [1, 3] is now the oldest leaf
    expect(index.setCapacity(0, 3)).toEqual([{ origin: 0, chunks: 1 }]);
    expect(depths(index, [1, 3])).toEqual([1, 0, 0, 0]);
    expect(index.setCapacity(0, 2)).toEqual([{ origin: 0, chunks: 1 }]);
    expect(depths(index, [1, 4])).toEqual([1, 0, 0, 0]);
    expect(depths(index, [1, 2])).toEqual([2, 0, 0, 0]);
  });

  it("budget eviction takes from the origin with the oldest chunk, ties to the lowest slot", () => {
    const index = fresh(4);
    index.insert([1, 2], 2, 5);
    index.insert([3, 4], 1, 5);
    // Two new chunks push the total to 6: both come off origin 1 (oldest `now` 5, lower slot).
    expect(index.insert([5, 6], 0, 6)).toEqual([{ origin: 1, chunks: 2 }]);
    expect(depths(index, [3, 4])).toEqual([0, 0, 0, 0]);
    expect(depths(index, [1, 2])).toEqual([0, 0, 2, 0]);
    index.checkInvariants();
  });

  it("keeps evicting when the oldest chunk is shared and frees nothing", () => {
    const index = fresh(3);
    index.insert([1, 2], 0, 1);
    index.insert([1, 2], 1, 2);
    // [9] makes 3 chunks: fine. [9, 8] makes 4: origin 0's [2] goes (shared, frees nothing),
    // then its [1] (shared too), then origin 1's [2] frees a chunk.
    expect(index.insert([9], 2, 3)).toEqual([]);
    expect(index.insert([9, 8], 2, 4)).toEqual([
      { origin: 0, chunks: 2 },
      { origin: 1, chunks: 1 },
    ]);
    expect(depths(index, [1, 2])).toEqual([0, 1, 0, 0]);
    index.checkInvariants();
  });

  it("an insert longer than the origin's capacity keeps only its first chunks", () => {
    const index = fresh();
    index.setCapacity(0, 2);
    expect(index.insert([1, 2, 3, 4], 0, 1)).toEqual([{ origin: 0, chunks: 2 }]);
    expect(depths(index, [1, 2, 3, 4])).toEqual([2, 0, 0, 0]);
    expect(index.stats().chunks).toBe(2);
  });

  it("returns one shared frozen empty array when nothing is evicted", () => {
    const index = fresh();
    const a = index.insert([1], 0, 1);
    expect(a).toEqual([]);
    expect(Object.isFrozen(a)).toBe(true);
    expect(index.insert([1, 2], 1, 2)).toBe(a);
  });
});

describe("RadixIndex collision guard", () => {
  it("stops inserting at a hash already held elsewhere", () => {
    const index = fresh();
    index.insert([5, 6, 7], 0, 1);
    index.insert([8, 6, 9], 1, 2);
    expect(depths(index, [8, 6, 9])).toEqual([0, 1, 0, 0]);
    expect(depths(index, [5, 6, 7])).toEqual([3, 0, 0, 0]);
    expect(index.stats().chunks).toBe(4);
    index.checkInvariants();
  });

  it("stops at a hash repeated within one request", () => {
    const index = fresh();
    index.insert([1, 1, 1], 0, 1);
    expect(index.stats().chunks).toBe(1);
    index.checkInvariants();
  });

  it("match never throws on junk", () => {
    const index = fresh();
    index.insert([1, 2, 3], 0, 1);
    const out = new Int32Array(4);
    for (const junk of [[Number.NaN], [-1, 1.5], [Infinity, 2 ** 60], [3, 2, 1], [], [2, 3]]) {
      expect(() => index.match(junk, out)).not.toThrow();
    }
    expect(index.match([2, 3], out)).toBe(0);
  });
});

describe("RadixIndex validation", () => {
  it.each([
    [{ maxOrigins: 0, maxChunks: 10 }, /maxOrigins/],
    [{ maxOrigins: 65536, maxChunks: 10 }, /maxOrigins/],
    [{ maxOrigins: 1.5, maxChunks: 10 }, /maxOrigins/],
    [{ maxOrigins: 4, maxChunks: 0 }, /maxChunks/],
    [{ maxOrigins: 4, maxChunks: Number.NaN }, /maxChunks/],
    [{ maxOrigins: 4, maxChunks: 10, initialChunks: -1 }, /initialChunks/],
    [{ maxOrigins: 4, maxChunks: 10, initialChunks: 2 ** 29 }, /initialChunks/],
  ])("rejects options %o", (options, message) => {
    expect(() => new RadixIndex(options)).toThrow(RangeError);
    expect(() => new RadixIndex(options)).toThrow(message);
  });

  it("rejects bad origins, capacities, clocks, keeps and hashes with a RangeError", () => {
    const index = fresh();
    expect(() => index.insert([1], 4, 0)).toThrow(/origin/);
    expect(() => index.insert([1], -1, 0)).toThrow(RangeError);
    expect(() => index.owned(0.5)).toThrow(RangeError);
    expect(() => index.setCapacity(0, -1)).toThrow(/chunks/);
    expect(() => index.insert([1], 0, Number.NaN)).toThrow(/now/);
    expect(() => index.truncate([1], 0, -1)).toThrow(/keep/);
    expect(() => index.insert([1, 2 ** 53], 0, 0)).toThrow(/hashes\[1\]/);
    expect(index.stats().chunks).toBe(0);
  });
});
