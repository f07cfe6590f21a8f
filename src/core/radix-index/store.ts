/**
 * Typed-array storage of the radix index: chunks, nodes and ownership entries as
 * structs-of-arrays with free lists, plus per-origin LRU lists and counters.
 *
 * No object per node: a chunk costs 20 bytes plus its table slots, a node 48, an entry 30, so
 * the index stays near a few tens of bytes per chunk-ownership and gives the GC nothing to trace.
 * Arrays grow by x1.5 and freed slots are reused, so steady-state inserts do not allocate.
 * This file only keeps links consistent (alloc, free, list splicing); the algorithms that decide
 * what to link live in the sibling files. Fields are public for those siblings: the store is
 * internal to `src/core/radix-index/` and never exported from `radix-index.ts`.
 *
 * - chunk c: `chunkHash` (53-bit chained hash), `chunkDepth` (0-based position in the prompt),
 *   `chunkNode` (the node whose label holds it; -1 when free), `chunkNextInLabel` (the next
 *   chunk of that label).
 * - node n: a label of `nodeLen` chunks from `nodeFirstChunk`, the first at depth `nodeStart`;
 *   `nodeParent` (-2 when free), `nodeFirstChild`, `nodePrevSibling` / `nodeNextSibling`
 *   (doubly linked so unlinking is O(1) under a root with thousands of children),
 *   `nodeFirstEntry` (its ownership entries) and `nodeHeat` / `nodeHeatAt` (its decayed request
 *   count, heat.ts). Node 0 is the root sentinel (length 0, no entries).
 * - entry e: one per (node, origin) the origin holds part of: `entryOrigin`, `entryNode` (-1
 *   when free), `entryLen` (how many leading chunks of the node's label it owns),
 *   `entryLastUse` (the `now` of its last touch), `entryNextInNode` (the node's next entry) and
 *   `entryLruPrev` / `entryLruNext`: the origin's LRU list of entries, `lruHead[o]` least and
 *   `lruTail[o]` most recently used.
 * - Per kind: `*HighWater` is how many slots were ever handed out (slots below it are live or
 *   on the free list, slots above it never used), `*FreeHead` the free list, and `chunks`,
 *   `nodes`, `entries` the live counts.
 * - Free lists: a free slot has no label, siblings or node, so each kind's free list reuses the
 *   link its live list no longer needs (`chunkNextInLabel`, `nodeNextSibling`,
 *   `entryNextInNode`). Only alloc and free write that reuse; everything else reads it with
 *   `nextFree*`.
 */

import { HashTable } from "../hash-table.ts";

export const NONE = -1;
export const FREE_NODE = -2;
export const ROOT = 0;

export class RadixStore {
  readonly maxOrigins: number;

  chunkHash: Float64Array;
  chunkDepth: Int32Array;
  chunkNode: Int32Array;
  chunkNextInLabel: Int32Array;
  chunkHighWater = 0;
  chunkFreeHead = NONE;
  /** Live chunks: distinct prefixes held by some origin. */
  chunks = 0;

  nodeParent: Int32Array;
  nodeFirstChild: Int32Array;
  nodePrevSibling: Int32Array;
  nodeNextSibling: Int32Array;
  nodeStart: Int32Array;
  nodeLen: Int32Array;
  nodeFirstChunk: Int32Array;
  nodeFirstEntry: Int32Array;
  /** Decayed count of requests through the node (heat.ts), as of `nodeHeatAt`. */
  nodeHeat: Float64Array;
  nodeHeatAt: Float64Array;
  /** Starts at 1: slot 0 is the root sentinel, never freed. */
  nodeHighWater = 1;
  nodeFreeHead = NONE;
  /** Live nodes, the root not counted. */
  nodes = 0;

  entryOrigin: Uint16Array;
  entryNode: Int32Array;
  entryLen: Int32Array;
  entryLastUse: Float64Array;
  entryLruPrev: Int32Array;
  entryLruNext: Int32Array;
  entryNextInNode: Int32Array;
  entryHighWater = 0;
  entryFreeHead = NONE;
  entries = 0;

  /** Per origin: its least and most recently used entry. */
  readonly lruHead: Int32Array;
  readonly lruTail: Int32Array;
  /** Per origin: chunks owned (the sum of its entries' lengths) and its capacity in chunks. */
  readonly owned: Int32Array;
  readonly capacity: Float64Array;
  /** Origins with owned > 0, in no particular order; `activePos[o]` is o's index or -1. */
  readonly active: Int32Array;
  readonly activePos: Int32Array;
  activeCount = 0;
  /** Sum over origins of `owned`. */
  ownerships = 0;

  /** Chunk hash -> live chunk. */
  readonly table: HashTable;

  constructor(maxOrigins: number, initialChunks: number) {
    this.maxOrigins = maxOrigins;
    const chunkCap = Math.max(16, initialChunks);
    const nodeCap = Math.max(16, chunkCap >>> 3);
    this.chunkHash = new Float64Array(chunkCap);
    this.chunkDepth = new Int32Array(chunkCap);
    this.chunkNode = new Int32Array(chunkCap).fill(NONE);
    this.chunkNextInLabel = new Int32Array(chunkCap).fill(NONE);
    this.nodeParent = new Int32Array(nodeCap).fill(FREE_NODE);
    this.nodeFirstChild = new Int32Array(nodeCap).fill(NONE);
    this.nodePrevSibling = new Int32Array(nodeCap).fill(NONE);
    this.nodeNextSibling = new Int32Array(nodeCap).fill(NONE);
    this.nodeStart = new Int32Array(nodeCap);
    this.nodeLen = new Int32Array(nodeCap);
    this.nodeFirstChunk = new Int32Array(nodeCap).fill(NONE);
    this.nodeFirstEntry = new Int32Array(nodeCap).fill(NONE);
    this.nodeHeat = new Float64Array(nodeCap);
    this.nodeHeatAt = new Float64Array(nodeCap);
    this.nodeParent[ROOT] = NONE;
    this.entryOrigin = new Uint16Array(nodeCap);
    this.entryNode = new Int32Array(nodeCap).fill(NONE);
    this.entryLen = new Int32Array(nodeCap);
    this.entryLastUse = new Float64Array(nodeCap);
    this.entryLruPrev = new Int32Array(nodeCap).fill(NONE);
    this.entryLruNext = new Int32Array(nodeCap).fill(NONE);
    this.entryNextInNode = new Int32Array(nodeCap).fill(NONE);
    this.lruHead = new Int32Array(maxOrigins).fill(NONE);
    this.lruTail = new Int32Array(maxOrigins).fill(NONE);
    this.owned = new Int32Array(maxOrigins);
    this.capacity = new Float64Array(maxOrigins).fill(Number.POSITIVE_INFINITY);
    this.active = new Int32Array(maxOrigins);
    this.activePos = new Int32Array(maxOrigins).fill(NONE);
    this.table = new HashTable(chunkCap);
  }

  // ---- chunks ----

  allocChunk(): number {
    let c = this.chunkFreeHead;
    if (c !== NONE) {
      this.chunkFreeHead = this.nextFreeChunk(c);
    } else {
      if (this.chunkHighWater === this.chunkHash.length) this.#growChunks();
      c = this.chunkHighWater++;
    }
    this.chunkNextInLabel[c] = NONE;
    this.chunks++;
    return c;
  }

  /** Frees chunk `c` and drops it from the table; the caller fixes the node's label. */
  freeChunk(c: number): void {
    this.table.remove(c, this.chunkHash);
    this.chunkNode[c] = NONE;
    this.chunkNextInLabel[c] = this.chunkFreeHead; // the free-list link
    this.chunkFreeHead = c;
    this.chunks--;
  }

  #growChunks(): void {
    const cap = grow(this.chunkHash.length);
    this.chunkHash = growF64(this.chunkHash, cap, 0);
    this.chunkDepth = growI32(this.chunkDepth, cap, 0);
    this.chunkNode = growI32(this.chunkNode, cap, NONE);
    this.chunkNextInLabel = growI32(this.chunkNextInLabel, cap, NONE);
  }

  // ---- nodes ----

  /** A fresh detached node (no parent, children, chunks or entries). */
  allocNode(): number {
    let n = this.nodeFreeHead;
    if (n !== NONE) {
      this.nodeFreeHead = this.nextFreeNode(n);
    } else {
      if (this.nodeHighWater === this.nodeParent.length) this.#growNodes();
      n = this.nodeHighWater++;
    }
    this.nodeParent[n] = NONE;
    this.nodeFirstChild[n] = NONE;
    this.nodePrevSibling[n] = NONE;
    this.nodeNextSibling[n] = NONE;
    this.nodeFirstChunk[n] = NONE;
    this.nodeFirstEntry[n] = NONE;
    this.nodeStart[n] = 0;
    this.nodeLen[n] = 0;
    this.nodeHeat[n] = 0;
    this.nodeHeatAt[n] = 0;
    this.nodes++;
    return n;
  }

  /** Frees a node that is already unlinked and owns no chunks, children or entries. */
  freeNode(n: number): void {
    this.nodeParent[n] = FREE_NODE;
    this.nodeLen[n] = 0;
    this.nodeFirstChunk[n] = NONE;
    this.nodeNextSibling[n] = this.nodeFreeHead; // the free-list link
    this.nodeFreeHead = n;
    this.nodes--;
  }

  /** Makes `n` the first child of `parent`. */
  linkChild(parent: number, n: number): void {
    const first = this.nodeFirstChild[parent]!;
    this.nodeParent[n] = parent;
    this.nodePrevSibling[n] = NONE;
    this.nodeNextSibling[n] = first;
    if (first !== NONE) this.nodePrevSibling[first] = n;
    this.nodeFirstChild[parent] = n;
  }

  unlinkChild(n: number): void {
    const prev = this.nodePrevSibling[n]!;
    const next = this.nodeNextSibling[n]!;
    if (prev !== NONE) this.nodeNextSibling[prev] = next;
    else this.nodeFirstChild[this.nodeParent[n]!] = next;
    if (next !== NONE) this.nodePrevSibling[next] = prev;
    this.nodePrevSibling[n] = NONE;
    this.nodeNextSibling[n] = NONE;
  }

  /** Puts `n` in `old`'s place among its parent's children and detaches `old`. */
  replaceChild(old: number, n: number): void {
    const parent = this.nodeParent[old]!;
    const prev = this.nodePrevSibling[old]!;
    const next = this.nodeNextSibling[old]!;
    this.nodeParent[n] = parent;
    this.nodePrevSibling[n] = prev;
    this.nodeNextSibling[n] = next;
    if (prev !== NONE) this.nodeNextSibling[prev] = n;
    else this.nodeFirstChild[parent] = n;
    if (next !== NONE) this.nodePrevSibling[next] = n;
    this.nodePrevSibling[old] = NONE;
    this.nodeNextSibling[old] = NONE;
  }

  #growNodes(): void {
    const cap = grow(this.nodeParent.length);
    this.nodeParent = growI32(this.nodeParent, cap, FREE_NODE);
    this.nodeFirstChild = growI32(this.nodeFirstChild, cap, NONE);
    this.nodePrevSibling = growI32(this.nodePrevSibling, cap, NONE);
    this.nodeNextSibling = growI32(this.nodeNextSibling, cap, NONE);
    this.nodeStart = growI32(this.nodeStart, cap, 0);
    this.nodeLen = growI32(this.nodeLen, cap, 0);
    this.nodeFirstChunk = growI32(this.nodeFirstChunk, cap, NONE);
    this.nodeFirstEntry = growI32(this.nodeFirstEntry, cap, NONE);
    this.nodeHeat = growF64(this.nodeHeat, cap, 0);
    this.nodeHeatAt = growF64(this.nodeHeatAt, cap, 0);
  }

  // ---- entries ----

  /** A new entry of `origin` on `node` with length 0, first in the node's list, not in any LRU. */
  allocEntry(node: number, origin: number): number {
    let e = this.entryFreeHead;
    if (e !== NONE) {
      this.entryFreeHead = this.nextFreeEntry(e);
    } else {
      if (this.entryHighWater === this.entryNode.length) this.#growEntries();
      e = this.entryHighWater++;
    }
    this.entryOrigin[e] = origin;
    this.entryNode[e] = node;
    this.entryLen[e] = 0;
    this.entryLastUse[e] = 0;
    this.entryLruPrev[e] = NONE;
    this.entryLruNext[e] = NONE;
    this.entryNextInNode[e] = this.nodeFirstEntry[node]!;
    this.nodeFirstEntry[node] = e;
    this.entries++;
    return e;
  }

  /** Unlinks entry `e` from its LRU list and its node, and frees it (its length must be 0). */
  freeEntry(e: number): void {
    this.lruUnlink(e);
    this.detachEntry(e);
    this.entryNode[e] = NONE;
    this.entryNextInNode[e] = this.entryFreeHead; // the free-list link
    this.entryFreeHead = e;
    this.entries--;
  }

  findEntry(node: number, origin: number): number {
    let e = this.nodeFirstEntry[node]!;
    while (e !== NONE && this.entryOrigin[e] !== origin) e = this.entryNextInNode[e]!;
    return e;
  }

  /** Removes `e` from its node's entry list (a node has at most one entry per origin). */
  detachEntry(e: number): void {
    const node = this.entryNode[e]!;
    let x = this.nodeFirstEntry[node]!;
    if (x === e) {
      this.nodeFirstEntry[node] = this.entryNextInNode[e]!;
    } else {
      while (this.entryNextInNode[x] !== e) x = this.entryNextInNode[x]!;
      this.entryNextInNode[x] = this.entryNextInNode[e]!;
    }
    this.entryNextInNode[e] = NONE;
  }

  /** Puts `e` (detached) first in `node`'s entry list. */
  attachEntry(e: number, node: number): void {
    this.entryNode[e] = node;
    this.entryNextInNode[e] = this.nodeFirstEntry[node]!;
    this.nodeFirstEntry[node] = e;
  }

  #growEntries(): void {
    const cap = grow(this.entryNode.length);
    this.entryOrigin = growU16(this.entryOrigin, cap);
    this.entryNode = growI32(this.entryNode, cap, NONE);
    this.entryLen = growI32(this.entryLen, cap, 0);
    this.entryLastUse = growF64(this.entryLastUse, cap, 0);
    this.entryLruPrev = growI32(this.entryLruPrev, cap, NONE);
    this.entryLruNext = growI32(this.entryLruNext, cap, NONE);
    this.entryNextInNode = growI32(this.entryNextInNode, cap, NONE);
  }

  // ---- free lists (see the header: each reuses the link its live list no longer needs) ----

  /** The free chunk after free chunk `c`, or -1. */
  nextFreeChunk(c: number): number {
    return this.chunkNextInLabel[c]!;
  }

  /** The free node after free node `n`, or -1. */
  nextFreeNode(n: number): number {
    return this.nodeNextSibling[n]!;
  }

  /** The free entry after free entry `e`, or -1. */
  nextFreeEntry(e: number): number {
    return this.entryNextInNode[e]!;
  }

  // ---- per-origin LRU lists and counters ----

  /** Appends `e` (not in a list) as its origin's most recently used entry. */
  lruAppend(e: number): void {
    const o = this.entryOrigin[e]!;
    const tail = this.lruTail[o]!;
    this.entryLruPrev[e] = tail;
    this.entryLruNext[e] = NONE;
    if (tail !== NONE) this.entryLruNext[tail] = e;
    else this.lruHead[o] = e;
    this.lruTail[o] = e;
  }

  /** Inserts `e` (not in a list) just after `ref` in their origin's list. */
  lruInsertAfter(ref: number, e: number): void {
    const o = this.entryOrigin[e]!;
    const next = this.entryLruNext[ref]!;
    this.entryLruPrev[e] = ref;
    this.entryLruNext[e] = next;
    this.entryLruNext[ref] = e;
    if (next !== NONE) this.entryLruPrev[next] = e;
    else this.lruTail[o] = e;
  }

  lruUnlink(e: number): void {
    const o = this.entryOrigin[e]!;
    const prev = this.entryLruPrev[e]!;
    const next = this.entryLruNext[e]!;
    if (prev !== NONE) this.entryLruNext[prev] = next;
    else this.lruHead[o] = next;
    if (next !== NONE) this.entryLruPrev[next] = prev;
    else this.lruTail[o] = prev;
    this.entryLruPrev[e] = NONE;
    this.entryLruNext[e] = NONE;
  }

  /** Adds `delta` chunks to `o`'s ownership and keeps the active-origin set in step. */
  addOwned(o: number, delta: number): void {
    const before = this.owned[o]!;
    const after = before + delta;
    this.owned[o] = after;
    this.ownerships += delta;
    if (before === 0 && after > 0) {
      this.activePos[o] = this.activeCount;
      this.active[this.activeCount++] = o;
    } else if (before > 0 && after === 0) {
      const pos = this.activePos[o]!;
      const last = this.active[--this.activeCount]!;
      this.active[pos] = last;
      this.activePos[last] = pos;
      this.activePos[o] = NONE;
    }
  }

  /** Bytes held by all typed arrays, table included. */
  bytes(): number {
    let total = this.table.slots.byteLength;
    for (const a of [
      this.chunkHash,
      this.chunkDepth,
      this.chunkNode,
      this.chunkNextInLabel,
      this.nodeParent,
      this.nodeFirstChild,
      this.nodePrevSibling,
      this.nodeNextSibling,
      this.nodeStart,
      this.nodeLen,
      this.nodeFirstChunk,
      this.nodeFirstEntry,
      this.nodeHeat,
      this.nodeHeatAt,
      this.entryOrigin,
      this.entryNode,
      this.entryLen,
      this.entryLastUse,
      this.entryLruPrev,
      this.entryLruNext,
      this.entryNextInNode,
      this.lruHead,
      this.lruTail,
      this.owned,
      this.capacity,
      this.active,
      this.activePos,
    ]) {
      total += a.byteLength;
    }
    return total;
  }
}

function grow(cap: number): number {
  return cap + Math.max(16, cap >>> 1);
}

function growI32(a: Int32Array, cap: number, fill: number): Int32Array {
  const b = new Int32Array(cap);
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}

function growF64(a: Float64Array, cap: number, fill: number): Float64Array {
  const b = new Float64Array(cap);
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}

function growU16(a: Uint16Array, cap: number): Uint16Array {
  const b = new Uint16Array(cap);
  b.set(a);
  return b;
}
