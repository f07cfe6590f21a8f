/**
 * Node splitting: cuts a node's label in two so that an insert always touches whole nodes.
 *
 * An insert splits a node when the request diverges inside it and when the request ends
 * strictly inside it. Afterwards every touch covers whole nodes, which is what lets one LRU
 * entry per (node, origin) stand for the chunk-level LRU order (see `radix-index.ts`).
 *
 * The top part moves to a new node that takes the old node's place under its parent, and the
 * old node keeps the bottom part and all its children: no child is re-parented, so a split
 * costs O(k + entries) for a top part of k chunks, even under a node with thousands of children.
 * Each entry is split the same way: an origin owning more than k chunks keeps its entry (now
 * for the bottom part, length minus k) and gets a new top entry of length k placed just after
 * it in its LRU list, i.e. the deeper part stays older, exactly as the chunk-level list orders
 * them. An entry owning at most k chunks moves whole to the top node.
 */

import { NONE, type RadixStore } from "./store.ts";

/** Splits `node` after its first `k` chunks (0 < k < length); returns the new top node. */
export function splitNode(s: RadixStore, node: number, k: number): number {
  const top = s.allocNode();
  s.replaceChild(node, top);
  s.nodeStart[top] = s.nodeStart[node]!;
  s.nodeLen[top] = k;
  s.nodeHead[top] = s.nodeHead[node]!;
  s.nodeHeat[top] = s.nodeHeat[node]!;
  s.nodeHeatAt[top] = s.nodeHeatAt[node]!;

  let c = s.nodeHead[node]!;
  for (let i = 1; i < k; i++) {
    s.chunkNode[c] = top;
    c = s.chunkNext[c]!;
  }
  s.chunkNode[c] = top;
  s.nodeHead[node] = s.chunkNext[c]!;
  s.chunkNext[c] = NONE;
  s.nodeStart[node] = s.nodeStart[node]! + k;
  s.nodeLen[node] = s.nodeLen[node]! - k;
  s.nodeChild[top] = node;
  s.nodeParent[node] = top;

  let prevKept = NONE;
  let e = s.nodeEntry[node]!;
  while (e !== NONE) {
    const next = s.entryNextInNode[e]!;
    const len = s.entryLen[e]!;
    if (len <= k) {
      if (prevKept === NONE) s.nodeEntry[node] = next;
      else s.entryNextInNode[prevKept] = next;
      s.attachEntry(e, top);
    } else {
      const t = s.allocEntry(top, s.entryOrigin[e]!);
      s.entryLen[t] = k;
      s.entryUse[t] = s.entryUse[e]!;
      s.lruInsertAfter(e, t);
      s.entryLen[e] = len - k;
      prevKept = e;
    }
    e = next;
  }
  return top;
}
