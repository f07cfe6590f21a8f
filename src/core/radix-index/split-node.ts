/**
 * Node splitting: cuts a node's label in two so that an insert always touches whole nodes.
 *
 * An insert splits a node when the request diverges inside it or ends strictly inside it.
 * Afterwards every touch covers whole nodes, which is what lets one LRU entry per (node,
 * origin) stand for the chunk-level LRU order (see `radix-index.ts`).
 *
 *   splitNode(N, 2), for origins A (owns 5 of N's chunks) and B (owns 1):
 *
 *   before                              after
 *     P                                   P
 *     |                                   |
 *     N [c0 c1 c2 c3 c4]   A:5  B:1       T [c0 c1]        A:2  B:1   new node, in N's place
 *     |                                   |                           among P's children
 *     N's children                        N [c2 c3 c4]     A:3        same slot, deeper part
 *                                         |
 *                                         N's children (not re-parented)
 *
 *   A's LRU list:  .. A@N ..               .. A@N, A@T ..  (the new top entry goes just after
 *                                          the old one: the deeper part stays older)
 *
 * An entry owning more than k chunks keeps its slot for the bottom part and gets a new top
 * entry of length k (A); one owning at most k moves whole to the top node (B). No child is
 * re-parented, so a split costs O(k + entries) even under a node with thousands of children.
 * The top node copies N's heat: the same requests went through both parts.
 */

import { NONE, type RadixStore } from "./store.ts";

/** Splits `node` after its first `k` chunks (0 < k < length); returns the new top node (T). */
export function splitNode(s: RadixStore, node: number, k: number): number {
  const top = s.allocNode();
  s.replaceChild(node, top);
  s.nodeStart[top] = s.nodeStart[node]!;
  s.nodeLen[top] = k;
  s.nodeFirstChunk[top] = s.nodeFirstChunk[node]!;
  s.nodeHeat[top] = s.nodeHeat[node]!;
  s.nodeHeatAt[top] = s.nodeHeatAt[node]!;

  let c = s.nodeFirstChunk[node]!;
  for (let i = 1; i < k; i++) {
    s.chunkNode[c] = top;
    c = s.chunkNextInLabel[c]!;
  }
  s.chunkNode[c] = top;
  s.nodeFirstChunk[node] = s.chunkNextInLabel[c]!;
  s.chunkNextInLabel[c] = NONE;
  s.nodeStart[node] = s.nodeStart[node]! + k;
  s.nodeLen[node] = s.nodeLen[node]! - k;
  s.nodeFirstChild[top] = node;
  s.nodeParent[node] = top;

  let prevKept = NONE;
  let e = s.nodeFirstEntry[node]!;
  while (e !== NONE) {
    const next = s.entryNextInNode[e]!;
    const len = s.entryLen[e]!;
    if (len <= k) {
      if (prevKept === NONE) s.nodeFirstEntry[node] = next;
      else s.entryNextInNode[prevKept] = next;
      s.attachEntry(e, top);
    } else {
      const t = s.allocEntry(top, s.entryOrigin[e]!);
      s.entryLen[t] = k;
      s.entryLastUse[t] = s.entryLastUse[e]!;
      s.lruInsertAfter(e, t);
      s.entryLen[e] = len - k;
      prevKept = e;
    }
    e = next;
  }
  return top;
}
