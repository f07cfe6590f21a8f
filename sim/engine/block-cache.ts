/**
 * One engine's KV cache: a fixed pool of blocks with prefix caching, after vLLM V1's
 * BlockPool/KVCacheManager (vllm/v1/core/block_pool.py, kv_cache_utils.py).
 *
 * - A block holds one chunk of a sequence. Modelling choice: an engine block is one router chunk
 *   (64 tokens by default) rather than vLLM's 16 tokens, so the engine's cache is keyed by the
 *   very chunk hashes the router indexes and `cachedTokens` is exact engine truth at chunk size.
 * - A full prompt block, once computed, is "sealed" under its chained hash; later requests whose
 *   prompt starts with the same hashes reuse it (the longest cached prefix of blocks).
 * - Blocks in use by a request are pinned (reference counted). Unpinned blocks sit in a free
 *   queue in LRU order and keep their contents until reused: allocation takes the queue's head
 *   and evicts whatever was cached there.
 * - A finished request frees its blocks tail first, so a sequence's deepest blocks are evicted
 *   before its prefix (vLLM frees `reversed(blocks)` for the same reason).
 * An optional `onEvict` hears each cached hash as its block is reused, for the engine's KV
 * events (vLLM's BlockRemoved).
 * Hash -> block lookups use the core's `HashTable` (open addressing over typed arrays): chunk
 * hashes are 53-bit doubles, which a JS Map would box and hash slowly.
 */
import { HashTable } from "../../src/core/hash-table.ts";

const NONE = -1;
const MISSING = -1;

export class BlockCache {
  readonly total: number;
  readonly #hash: Float64Array;
  readonly #refs: Int32Array;
  readonly #prev: Int32Array;
  readonly #next: Int32Array;
  /** Sentinel of the circular free queue: head = next[q], tail = prev[q]. */
  readonly #q: number;
  readonly #table: HashTable;
  #free = 0;
  evictions = 0;
  readonly #onEvict: ((hash: number) => void) | null;

  constructor(blocks: number, onEvict: ((hash: number) => void) | null = null) {
    this.#onEvict = onEvict;
    if (!Number.isInteger(blocks) || blocks < 1) {
      throw new RangeError(`blocks must be a positive integer, got ${blocks}`);
    }
    this.total = blocks;
    this.#hash = new Float64Array(blocks).fill(NONE);
    this.#refs = new Int32Array(blocks);
    this.#prev = new Int32Array(blocks + 1);
    this.#next = new Int32Array(blocks + 1);
    this.#table = new HashTable(blocks);
    this.#q = blocks;
    this.#prev[this.#q] = this.#q;
    this.#next[this.#q] = this.#q;
    for (let b = 0; b < blocks; b++) this.#append(b);
  }

  /** Blocks not pinned by any request (cached or empty): what allocation may take. */
  get free(): number {
    return this.#free;
  }

  /** Blocks pinned by running requests. */
  get used(): number {
    return this.total - this.#free;
  }

  /** Leading hashes (at most `limit`) whose blocks are cached. A pure read. */
  lookup(hashes: ArrayLike<number>, limit: number): number {
    const n = Math.min(limit, hashes.length);
    let k = 0;
    while (k < n && this.#find(hashes[k] as number) !== MISSING) k++;
    return k;
  }

  /** Of the first `count` hashes (all cached), how many blocks are unpinned (in the free queue). */
  unpinnedAmong(hashes: ArrayLike<number>, count: number): number {
    let n = 0;
    for (let k = 0; k < count; k++) {
      if (this.#refs[this.#find(hashes[k] as number)] === 0) n++;
    }
    return n;
  }

  /** Pin the cached blocks of the first `count` hashes and append them to `into`. */
  acquire(hashes: ArrayLike<number>, count: number, into: number[]): void {
    for (let k = 0; k < count; k++) {
      const b = this.#find(hashes[k] as number);
      if (this.#refs[b] === 0) this.#unlink(b);
      this.#refs[b] = (this.#refs[b] as number) + 1;
      into.push(b);
    }
  }

  /** Take the least recently freed block, evicting its cached contents. Caller checks `free`. */
  allocate(): number {
    const b = this.#next[this.#q] as number;
    if (b === this.#q) throw new Error("KV cache exhausted: allocate() without a free block");
    this.#unlink(b);
    if (this.#hash[b] !== NONE) {
      this.#table.remove(b, this.#hash);
      this.#onEvict?.(this.#hash[b] as number);
      this.#hash[b] = NONE;
      this.evictions++;
    }
    this.#refs[b] = 1;
    return b;
  }

  /**
   * Block `b` now holds the full chunk named `hash`; the first copy of a hash is the one kept.
   * Returns whether the hash is newly cached (false: `b` already sealed, or another block has it).
   */
  seal(b: number, hash: number): boolean {
    if (this.#hash[b] !== NONE || this.#find(hash) !== MISSING) return false;
    this.#hash[b] = hash;
    this.#table.insert(b, this.#hash);
    return true;
  }

  /** Unpin a request's blocks, tail first; unreferenced blocks join the free queue's tail. */
  release(blocks: readonly number[]): void {
    for (let k = blocks.length - 1; k >= 0; k--) {
      const b = blocks[k] as number;
      const refs = (this.#refs[b] as number) - 1;
      this.#refs[b] = refs;
      if (refs === 0) this.#append(b);
    }
  }

  #find(hash: number): number {
    return this.#table.find(hash, this.#hash);
  }

  #append(b: number): void {
    const tail = this.#prev[this.#q] as number;
    this.#next[tail] = b;
    this.#prev[b] = tail;
    this.#next[b] = this.#q;
    this.#prev[this.#q] = b;
    this.#free++;
  }

  #unlink(b: number): void {
    const p = this.#prev[b] as number;
    const n = this.#next[b] as number;
    this.#next[p] = n;
    this.#prev[n] = p;
    this.#free--;
  }
}
