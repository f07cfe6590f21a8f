import { describe, expect, it } from "vitest";
import { BlockCache } from "./block-cache.ts";

/** Allocate and seal a sequence of hashes, then free it (as a finished request does). */
function store(cache: BlockCache, hashes: number[]): void {
  const blocks: number[] = [];
  cache.acquire(hashes, cache.lookup(hashes, hashes.length), blocks);
  for (let k = blocks.length; k < hashes.length; k++) {
    const b = cache.allocate();
    cache.seal(b, hashes[k] as number);
    blocks.push(b);
  }
  cache.release(blocks);
}

describe("BlockCache", () => {
  it("finds the longest cached prefix, up to the limit", () => {
    const cache = new BlockCache(8);
    store(cache, [1, 2, 3]);
    expect(cache.lookup([1, 2, 3, 4], 4)).toBe(3);
    expect(cache.lookup([1, 2, 9], 3)).toBe(2);
    expect(cache.lookup([1, 2, 3], 2)).toBe(2);
    expect(cache.lookup([7], 1)).toBe(0);
  });

  it("evicts least recently freed blocks first, a sequence's tail before its prefix", () => {
    const cache = new BlockCache(6);
    store(cache, [1, 2, 3]);
    store(cache, [11, 12, 13]);
    // All six blocks hold data; the next three allocations take [1,2,3]'s tail first.
    store(cache, [21]);
    expect(cache.lookup([1, 2, 3], 3)).toBe(2);
    store(cache, [31, 32]);
    expect(cache.lookup([1, 2, 3], 3)).toBe(0);
    expect(cache.lookup([11, 12, 13], 3)).toBe(3);
    expect(cache.evictions).toBe(3);
  });

  it("never evicts pinned blocks and counts only unpinned ones as free", () => {
    const cache = new BlockCache(3);
    store(cache, [1, 2]);
    const held: number[] = [];
    cache.acquire([1, 2], 2, held);
    expect(cache.free).toBe(1);
    expect(cache.unpinnedAmong([1, 2], 2)).toBe(0);
    cache.allocate();
    expect(cache.free).toBe(0);
    expect(() => cache.allocate()).toThrow(/exhausted/);
    expect(cache.lookup([1, 2], 2)).toBe(2);
  });

  it("keeps the first copy of a hash sealed twice", () => {
    const cache = new BlockCache(4);
    const a = cache.allocate();
    const b = cache.allocate();
    cache.seal(a, 5);
    cache.seal(b, 5);
    cache.release([a, b]);
    store(cache, [8, 9]);
    // The duplicate (b) was anonymous; allocations took the two empty blocks first.
    expect(cache.lookup([5], 1)).toBe(1);
  });
});
