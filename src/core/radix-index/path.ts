/**
 * A request's path through the index: finding its deepest held chunk, appending new chunks
 * and touching the path for one origin.
 *
 * Hashes are chained (hash i covers chunks 0..i), so a held hash at depth i means the whole
 * prefix 0..i is held, and "held at depth i" is monotone along a request: the deepest held
 * depth is a binary search with O(1) table lookups. The result is then verified against the
 * path's labels (O(depth) sequential reads, no lookups), so a hash collision or a malformed,
 * unchained request can never make the index claim a prefix it does not hold; only then does a
 * linear walk (one lookup per chunk, following the trie's links) find the exact answer.
 */

import { warm } from "./heat.ts";
import { NONE, type RadixStore, ROOT } from "./store.ts";

/**
 * Longest prefix of `hashes[0..n)` the index holds: returns its last depth (-1 if none) and
 * puts the chunk at that depth in `at[0]`. Never throws, whatever `hashes` holds.
 */
export function deepestHeld(
  s: RadixStore,
  hashes: ArrayLike<number>,
  n: number,
  at: Int32Array,
): number {
  const table = s.table;
  const keys = s.chunkHash;
  const depths = s.chunkDepth;
  let lo = 0;
  let hi = n - 1;
  let best = -1;
  let bestChunk = NONE;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = table.find(hashes[mid]!, keys);
    if (c !== NONE && depths[c] === mid) {
      best = mid;
      bestChunk = c;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (best >= 0 && !pathMatches(s, hashes, bestChunk, best)) return walkHeld(s, hashes, n, at);
  at[0] = bestChunk;
  return best;
}

/** Whether the labels from the root down to chunk `c` (at depth `depth`) equal `hashes[0..depth]`. */
function pathMatches(s: RadixStore, hashes: ArrayLike<number>, c: number, depth: number): boolean {
  let end = depth;
  for (let node = s.chunkNode[c]!; node !== ROOT; node = s.nodeParent[node]!) {
    let x = s.nodeFirstChunk[node]!;
    for (let d = s.nodeStart[node]!; d <= end; d++, x = s.chunkNextInLabel[x]!) {
      if (s.chunkHash[x] !== hashes[d]) return false;
    }
    end = s.nodeStart[node]! - 1;
  }
  return true;
}

/**
 * Exact longest held prefix by walking the trie from the root, one lookup per depth: each hash
 * is in the table at most once, so following it from the previous chunk either continues the
 * path or ends it.
 */
function walkHeld(s: RadixStore, hashes: ArrayLike<number>, n: number, at: Int32Array): number {
  let prev = NONE;
  let d = 0;
  for (; d < n; d++) {
    const c = s.table.find(hashes[d]!, s.chunkHash);
    if (c === NONE || s.chunkDepth[c] !== d) break;
    if (prev !== NONE && s.chunkNextInLabel[prev] !== c) {
      const node = s.chunkNode[c]!;
      const crossesEdge =
        s.chunkNextInLabel[prev] === NONE &&
        s.nodeFirstChunk[node] === c &&
        s.nodeParent[node] === s.chunkNode[prev];
      if (!crossesEdge) break;
    }
    prev = c;
  }
  at[0] = prev;
  return d - 1;
}

/**
 * Appends `hashes[from..]` as one new child of `parent` and returns it, or returns `parent` when
 * nothing was added. Collision guard: stops at the first hash already in the index (elsewhere,
 * or earlier in this same request), so the structure is never corrupted.
 */
export function appendRun(
  s: RadixStore,
  parent: number,
  hashes: ArrayLike<number>,
  from: number,
): number {
  const end = hashes.length;
  s.table.reserve(s.chunks + end - from, s.chunkHash);
  let node = NONE;
  let last = NONE;
  for (let i = from; i < end; i++) {
    const h = hashes[i]!;
    if (s.table.find(h, s.chunkHash) !== NONE) break;
    const c = s.allocChunk();
    s.chunkHash[c] = h;
    s.chunkDepth[c] = i;
    if (node === NONE) {
      node = s.allocNode();
      s.linkChild(parent, node);
      s.nodeStart[node] = from;
      s.nodeFirstChunk[node] = c;
    } else {
      s.chunkNextInLabel[last] = c;
    }
    s.chunkNode[c] = node;
    s.nodeLen[node] = i - from + 1;
    s.table.insert(c, s.chunkHash);
    last = c;
  }
  return node === NONE ? parent : node;
}

/**
 * Gives `origin` full ownership of every node from `tip` up to the root, stamps them with `now`
 * and moves them to its LRU tail deepest first, so each ancestor ends more recent than its
 * descendants (the chunk-level order, node by node); each node on the path warms by one request
 * when `warms` (an insert that records a request).
 */
export function touchPath(
  s: RadixStore,
  tip: number,
  origin: number,
  now: number,
  halfLifeMs: number,
  warms: boolean,
): void {
  for (let node = tip; node !== ROOT; node = s.nodeParent[node]!) {
    if (warms) warm(s, node, now, halfLifeMs);
    const len = s.nodeLen[node]!;
    let e = s.findEntry(node, origin);
    if (e === NONE) {
      e = s.allocEntry(node, origin);
      s.lruAppend(e);
    } else if (s.lruTail[origin] !== e) {
      s.lruUnlink(e);
      s.lruAppend(e);
    }
    s.addOwned(origin, len - s.entryLen[e]!);
    s.entryLen[e] = len;
    s.entryLastUse[e] = now;
  }
}
