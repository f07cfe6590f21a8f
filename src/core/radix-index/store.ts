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
 *   `chunkNode`, `chunkNext` (next chunk of the node's label, or the free-list link).
 *   A free chunk has `chunkNode = -1`.
 * - node n: a run of chunks (`nodeHead`, `nodeLen`, `nodeStart` = depth of its first chunk)
 *   with `nodeParent`, `nodeChild` (first child), `nodePrev` / `nodeNext` (siblings, doubly
 *   linked so unlinking is O(1) under a root with thousands of children) and `nodeEntry`
 *   (first ownership entry), and `nodeHeat` / `nodeHeatAt` (its decayed request count, heat.ts).
 *   Node 0 is the root sentinel (length 0, no entries). A free node
 *   has `nodeParent = -2` and chains through `nodeNext`.
 * - entry e: one per (node, origin): `entryOrigin`, `entryNode`, `entryLen` (owned prefix of the
 *   node's label), `entryUse` (logical clock of its last touch), `entryPrev` / `entryNext`
 *   (the origin's LRU list, head = least recently used) and `entryNextInNode`. A free entry has
 *   `entryNode = -1` and chains through `entryNextInNode`.
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
  chunkNext: Int32Array;
  chunkTop = 0;
  chunkFree = NONE;
  chunks = 0;

  nodeParent: Int32Array;
  nodeChild: Int32Array;
  nodePrev: Int32Array;
  nodeNext: Int32Array;
  nodeStart: Int32Array;
  nodeLen: Int32Array;
  nodeHead: Int32Array;
  nodeEntry: Int32Array;
  /** Decayed count of requests through the node (heat.ts), as of `nodeHeatAt`. */
  nodeHeat: Float64Array;
  nodeHeatAt: Float64Array;
  nodeTop = 1;
  nodeFree = NONE;
  nodes = 0;

  entryOrigin: Uint16Array;
  entryNode: Int32Array;
  entryLen: Int32Array;
  entryUse: Float64Array;
  entryPrev: Int32Array;
  entryNext: Int32Array;
  entryNextInNode: Int32Array;
  entryTop = 0;
  entryFree = NONE;
  entries = 0;

  readonly lruHead: Int32Array;
  readonly lruTail: Int32Array;
  readonly owned: Int32Array;
  readonly capacity: Float64Array;
  /** Origins with owned > 0, in no particular order; `activePos[o]` is o's index or -1. */
  readonly active: Int32Array;
  readonly activePos: Int32Array;
  activeCount = 0;
  ownerships = 0;

  readonly table: HashTable;

  constructor(maxOrigins: number, initialChunks: number) {
    this.maxOrigins = maxOrigins;
    const chunkCap = Math.max(16, initialChunks);
    const nodeCap = Math.max(16, chunkCap >>> 3);
    this.chunkHash = new Float64Array(chunkCap);
    this.chunkDepth = new Int32Array(chunkCap);
    this.chunkNode = new Int32Array(chunkCap).fill(NONE);
    this.chunkNext = new Int32Array(chunkCap).fill(NONE);
    this.nodeParent = new Int32Array(nodeCap).fill(FREE_NODE);
    this.nodeChild = new Int32Array(nodeCap).fill(NONE);
    this.nodePrev = new Int32Array(nodeCap).fill(NONE);
    this.nodeNext = new Int32Array(nodeCap).fill(NONE);
    this.nodeStart = new Int32Array(nodeCap);
    this.nodeLen = new Int32Array(nodeCap);
    this.nodeHead = new Int32Array(nodeCap).fill(NONE);
    this.nodeEntry = new Int32Array(nodeCap).fill(NONE);
    this.nodeHeat = new Float64Array(nodeCap);
    this.nodeHeatAt = new Float64Array(nodeCap);
    this.nodeParent[ROOT] = NONE;
    this.entryOrigin = new Uint16Array(nodeCap);
    this.entryNode = new Int32Array(nodeCap).fill(NONE);
    this.entryLen = new Int32Array(nodeCap);
    this.entryUse = new Float64Array(nodeCap);
    this.entryPrev = new Int32Array(nodeCap).fill(NONE);
    this.entryNext = new Int32Array(nodeCap).fill(NONE);
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
    let c = this.chunkFree;
    if (c !== NONE) {
      this.chunkFree = this.chunkNext[c]!;
    } else {
      if (this.chunkTop === this.chunkHash.length) this.#growChunks();
      c = this.chunkTop++;
    }
    this.chunkNext[c] = NONE;
    this.chunks++;
    return c;
  }

  /** Frees chunk `c` and drops it from the table; the caller fixes the node's label. */
  freeChunk(c: number): void {
    this.table.remove(c, this.chunkHash);
    this.chunkNode[c] = NONE;
    this.chunkNext[c] = this.chunkFree;
    this.chunkFree = c;
    this.chunks--;
  }

  #growChunks(): void {
    const cap = grow(this.chunkHash.length);
    this.chunkHash = growF64(this.chunkHash, cap, 0);
    this.chunkDepth = growI32(this.chunkDepth, cap, 0);
    this.chunkNode = growI32(this.chunkNode, cap, NONE);
    this.chunkNext = growI32(this.chunkNext, cap, NONE);
  }

  // ---- nodes ----

  /** A fresh detached node (no parent, children, chunks or entries). */
  allocNode(): number {
    let n = this.nodeFree;
    if (n !== NONE) {
      this.nodeFree = this.nodeNext[n]!;
    } else {
      if (this.nodeTop === this.nodeParent.length) this.#growNodes();
      n = this.nodeTop++;
    }
    this.nodeParent[n] = NONE;
    this.nodeChild[n] = NONE;
    this.nodePrev[n] = NONE;
    this.nodeNext[n] = NONE;
    this.nodeHead[n] = NONE;
    this.nodeEntry[n] = NONE;
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
    this.nodeHead[n] = NONE;
    this.nodeNext[n] = this.nodeFree;
    this.nodeFree = n;
    this.nodes--;
  }

  /** Makes `n` the first child of `parent`. */
  linkChild(parent: number, n: number): void {
    const first = this.nodeChild[parent]!;
    this.nodeParent[n] = parent;
    this.nodePrev[n] = NONE;
    this.nodeNext[n] = first;
    if (first !== NONE) this.nodePrev[first] = n;
    this.nodeChild[parent] = n;
  }

  unlinkChild(n: number): void {
    const prev = this.nodePrev[n]!;
    const next = this.nodeNext[n]!;
    if (prev !== NONE) this.nodeNext[prev] = next;
    else this.nodeChild[this.nodeParent[n]!] = next;
    if (next !== NONE) this.nodePrev[next] = prev;
    this.nodePrev[n] = NONE;
    this.nodeNext[n] = NONE;
  }

  /** Puts `n` in `old`'s place among its parent's children and detaches `old`. */
  replaceChild(old: number, n: number): void {
    const parent = this.nodeParent[old]!;
    const prev = this.nodePrev[old]!;
    const next = this.nodeNext[old]!;
    this.nodeParent[n] = parent;
    this.nodePrev[n] = prev;
    this.nodeNext[n] = next;
    if (prev !== NONE) this.nodeNext[prev] = n;
    else this.nodeChild[parent] = n;
    if (next !== NONE) this.nodePrev[next] = n;
    this.nodePrev[old] = NONE;
    this.nodeNext[old] = NONE;
  }

  #growNodes(): void {
    const cap = grow(this.nodeParent.length);
    this.nodeParent = growI32(this.nodeParent, cap, FREE_NODE);
    this.nodeChild = growI32(this.nodeChild, cap, NONE);
    this.nodePrev = growI32(this.nodePrev, cap, NONE);
    this.nodeNext = growI32(this.nodeNext, cap, NONE);
    this.nodeStart = growI32(this.nodeStart, cap, 0);
    this.nodeLen = growI32(this.nodeLen, cap, 0);
    this.nodeHead = growI32(this.nodeHead, cap, NONE);
    this.nodeEntry = growI32(this.nodeEntry, cap, NONE);
    this.nodeHeat = growF64(this.nodeHeat, cap, 0);
    this.nodeHeatAt = growF64(this.nodeHeatAt, cap, 0);
  }

  // ---- entries ----

  /** A new entry of `origin` on `node` with length 0, first in the node's list, not in any LRU. */
  allocEntry(node: number, origin: number): number {
    let e = this.entryFree;
    if (e !== NONE) {
      this.entryFree = this.entryNextInNode[e]!;
    } else {
      if (this.entryTop === this.entryNode.length) this.#growEntries();
      e = this.entryTop++;
    }
    this.entryOrigin[e] = origin;
    this.entryNode[e] = node;
    this.entryLen[e] = 0;
    this.entryUse[e] = 0;
    this.entryPrev[e] = NONE;
    this.entryNext[e] = NONE;
    this.entryNextInNode[e] = this.nodeEntry[node]!;
    this.nodeEntry[node] = e;
    this.entries++;
    return e;
  }

  /** Unlinks entry `e` from its LRU list and its node, and frees it (its length must be 0). */
  freeEntry(e: number): void {
    this.lruUnlink(e);
    this.detachEntry(e);
    this.entryNode[e] = NONE;
    this.entryNextInNode[e] = this.entryFree;
    this.entryFree = e;
    this.entries--;
  }

  findEntry(node: number, origin: number): number {
    let e = this.nodeEntry[node]!;
    while (e !== NONE && this.entryOrigin[e] !== origin) e = this.entryNextInNode[e]!;
    return e;
  }

  /** Removes `e` from its node's entry list (a node has at most one entry per origin). */
  detachEntry(e: number): void {
    const node = this.entryNode[e]!;
    let x = this.nodeEntry[node]!;
    if (x === e) {
      this.nodeEntry[node] = this.entryNextInNode[e]!;
    } else {
      while (this.entryNextInNode[x] !== e) x = this.entryNextInNode[x]!;
      this.entryNextInNode[x] = this.entryNextInNode[e]!;
    }
    this.entryNextInNode[e] = NONE;
  }

  /** Puts `e` (detached) first in `node`'s entry list. */
  attachEntry(e: number, node: number): void {
    this.entryNode[e] = node;
    this.entryNextInNode[e] = this.nodeEntry[node]!;
    this.nodeEntry[node] = e;
  }

  #growEntries(): void {
    const cap = grow(this.entryNode.length);
    this.entryOrigin = growU16(this.entryOrigin, cap);
    this.entryNode = growI32(this.entryNode, cap, NONE);
    this.entryLen = growI32(this.entryLen, cap, 0);
    this.entryUse = growF64(this.entryUse, cap, 0);
    this.entryPrev = growI32(this.entryPrev, cap, NONE);
    this.entryNext = growI32(this.entryNext, cap, NONE);
    this.entryNextInNode = growI32(this.entryNextInNode, cap, NONE);
  }

  // ---- per-origin LRU lists and counters ----

  /** Appends `e` (not in a list) as its origin's most recently used entry. */
  lruAppend(e: number): void {
    const o = this.entryOrigin[e]!;
    const tail = this.lruTail[o]!;
    this.entryPrev[e] = tail;
    this.entryNext[e] = NONE;
    if (tail !== NONE) this.entryNext[tail] = e;
    else this.lruHead[o] = e;
    this.lruTail[o] = e;
  }

  /** Inserts `e` (not in a list) just after `ref` in their origin's list. */
  lruInsertAfter(ref: number, e: number): void {
    const o = this.entryOrigin[e]!;
    const next = this.entryNext[ref]!;
    this.entryPrev[e] = ref;
    this.entryNext[e] = next;
    this.entryNext[ref] = e;
    if (next !== NONE) this.entryPrev[next] = e;
    else this.lruTail[o] = e;
  }

  lruUnlink(e: number): void {
    const o = this.entryOrigin[e]!;
    const prev = this.entryPrev[e]!;
    const next = this.entryNext[e]!;
    if (prev !== NONE) this.entryNext[prev] = next;
    else this.lruHead[o] = next;
    if (next !== NONE) this.entryPrev[next] = prev;
    else this.lruTail[o] = prev;
    this.entryPrev[e] = NONE;
    this.entryNext[e] = NONE;
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
      this.chunkNext,
      this.nodeParent,
      this.nodeChild,
      this.nodePrev,
      this.nodeNext,
      this.nodeStart,
      this.nodeLen,
      this.nodeHead,
      this.nodeEntry,
      this.nodeHeat,
      this.nodeHeatAt,
      this.entryOrigin,
      this.entryNode,
      this.entryLen,
      this.entryUse,
      this.entryPrev,
      this.entryNext,
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
