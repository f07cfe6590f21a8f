/**
 * Flattening the store into an `IndexImage` (for `snapshot`) and rebuilding a store from one
 * (for `restore`).
 *
 * The image keeps everything that decides future behaviour: the node structure (so splits
 * already made stay made and `stats().nodes` round-trips), each label, each origin's entries in
 * LRU order with their lastUse, and finite capacities. Slot numbers, free lists and the order
 * of entries within a node are not kept: nothing observable depends on them.
 */

import { checkInvariants } from "./invariants.ts";
import type { IndexImage } from "./snapshot.ts";
import { NONE, type RadixStore, ROOT } from "./store.ts";

export function toImage(s: RadixStore, maxChunks: number): IndexImage {
  const serial = new Int32Array(s.nodeHighWater).fill(NONE);
  const nodeParent = new Int32Array(s.nodes);
  const nodeLen = new Int32Array(s.nodes);
  const hashes = new Float64Array(s.chunks);
  let i = 0;
  let h = 0;
  let node = s.nodeFirstChild[ROOT]!;
  while (node !== NONE) {
    const parent = s.nodeParent[node]!;
    serial[node] = i;
    nodeParent[i] = parent === ROOT ? NONE : serial[parent]!;
    nodeLen[i] = s.nodeLen[node]!;
    i++;
    for (let c = s.nodeFirstChunk[node]!; c !== NONE; c = s.chunkNextInLabel[c]!)
      hashes[h++] = s.chunkHash[c]!;
    // Pre-order: first child, else the next sibling of the nearest ancestor that has one.
    if (s.nodeFirstChild[node] !== NONE) {
      node = s.nodeFirstChild[node]!;
      continue;
    }
    while (node !== ROOT && s.nodeNextSibling[node] === NONE) node = s.nodeParent[node]!;
    node = node === ROOT ? NONE : s.nodeNextSibling[node]!;
  }

  let lru = 0;
  let caps = 0;
  for (let o = 0; o < s.maxOrigins; o++) {
    if (s.lruHead[o] !== NONE) lru++;
    if (s.capacity[o] !== Number.POSITIVE_INFINITY) caps++;
  }
  const img: IndexImage = {
    maxOrigins: s.maxOrigins,
    maxChunks,
    nodeParent,
    nodeLen,
    hashes,
    lruOrigin: new Int32Array(lru),
    lruCount: new Int32Array(lru),
    entryNode: new Int32Array(s.entries),
    entryLen: new Int32Array(s.entries),
    entryLastUse: new Float64Array(s.entries),
    capOrigin: new Int32Array(caps),
    capValue: new Float64Array(caps),
  };
  let j = 0;
  let k = 0;
  let p = 0;
  for (let o = 0; o < s.maxOrigins; o++) {
    if (s.capacity[o] !== Number.POSITIVE_INFINITY) {
      img.capOrigin[k] = o;
      img.capValue[k++] = s.capacity[o]!;
    }
    if (s.lruHead[o] === NONE) continue;
    const first = p;
    for (let e = s.lruHead[o]!; e !== NONE; e = s.entryLruNext[e]!, p++) {
      img.entryNode[p] = serial[s.entryNode[e]!]!;
      img.entryLen[p] = s.entryLen[e]!;
      img.entryLastUse[p] = s.entryLastUse[e]!;
    }
    img.lruOrigin[j] = o;
    img.lruCount[j++] = p - first;
  }
  return img;
}

/** Rebuilds `img` into the empty store `s`; throws if the image does not describe a valid index. */
export function fromImage(img: IndexImage, s: RadixStore): void {
  const bad = (msg: string): never => {
    throw new Error(`invalid radix index snapshot: ${msg}`);
  };
  const nodes = img.nodeParent.length;
  const nodeOf = new Int32Array(nodes);
  s.table.reserve(img.hashes.length, s.chunkHash);
  let h = 0;
  for (let i = 0; i < nodes; i++) {
    const n = s.allocNode();
    nodeOf[i] = n;
    const p = img.nodeParent[i]!;
    const parent = p === NONE ? ROOT : nodeOf[p]!;
    const start = s.nodeStart[parent]! + s.nodeLen[parent]!;
    const len = img.nodeLen[i]!;
    s.nodeParent[n] = parent;
    s.nodeStart[n] = start;
    s.nodeLen[n] = len;
    let last = NONE;
    for (let k = 0; k < len; k++) {
      const hash = img.hashes[h++]!;
      if (s.table.find(hash, s.chunkHash) !== NONE) bad(`hash ${hash} appears twice`);
      const c = s.allocChunk();
      s.chunkHash[c] = hash;
      s.chunkDepth[c] = start + k;
      s.chunkNode[c] = n;
      if (last === NONE) s.nodeFirstChunk[n] = c;
      else s.chunkNextInLabel[last] = c;
      s.table.insert(c, s.chunkHash);
      last = c;
    }
  }
  // Prepending in reverse keeps each parent's children in their stored order.
  for (let i = nodes - 1; i >= 0; i--) {
    const n = nodeOf[i]!;
    s.linkChild(s.nodeParent[n]!, n);
  }

  let p = 0;
  for (let j = 0; j < img.lruOrigin.length; j++) {
    const o = img.lruOrigin[j]!;
    if (o >= s.maxOrigins) bad(`origin ${o} does not fit maxOrigins ${s.maxOrigins}`);
    for (let k = 0; k < img.lruCount[j]!; k++, p++) {
      const node = nodeOf[img.entryNode[p]!]!;
      if (s.findEntry(node, o) !== NONE) bad(`origin ${o} has two entries on one node`);
      const e = s.allocEntry(node, o);
      s.entryLen[e] = img.entryLen[p]!;
      s.entryLastUse[e] = img.entryLastUse[p]!;
      s.lruAppend(e);
      s.addOwned(o, img.entryLen[p]!);
    }
  }
  for (let k = 0; k < img.capOrigin.length; k++) {
    const o = img.capOrigin[k]!;
    if (o >= s.maxOrigins) bad(`capacity origin ${o} does not fit maxOrigins ${s.maxOrigins}`);
    s.capacity[o] = img.capValue[k]!;
  }
  try {
    checkInvariants(s, Number.POSITIVE_INFINITY);
  } catch (err) {
    bad((err as Error).message);
  }
}
