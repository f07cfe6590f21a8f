/**
 * Ownership removal at chunk granularity: shortens one entry from its deep end and frees what
 * no origin holds any more.
 *
 *   trimEntry(A@N, 2), where A owns 4 of N's chunks and B owns 1:
 *
 *   before                        after
 *     N [c0 c1 c2 c3]  A:4 B:1      N [c0 c1]  A:2 B:1     c2, c3 freed: nobody holds them
 *
 *   then trimEntry(A@N, 2) and trimEntry(B@N, 1):
 *     N [c0 c1]        A:2 B:1      (N unlinked from its parent and freed, with c0, c1)
 *
 * Every removal path (capacity and budget eviction, `truncate`, `removeOrigin`) ends here, so
 * "a chunk exists iff some origin holds it" is enforced in one place. Callers only trim an
 * entry whose origin owns nothing below it (the LRU head always qualifies, see `evict.ts`), so
 * when a node's longest entry shrinks the node has no children and its tail chunks can go.
 * Single-child nodes left behind are not merged back: that costs a node header (32 bytes) per
 * such node and never changes what `match` returns.
 */

import { NONE, type RadixStore } from "./store.ts";

/** Removes `by` (1..length) chunks of ownership from entry `e`, deepest first. */
export function trimEntry(s: RadixStore, e: number, by: number): void {
  const node = s.entryNode[e]!;
  const len = s.entryLen[e]! - by;
  s.addOwned(s.entryOrigin[e]!, -by);
  if (len === 0) s.freeEntry(e);
  else s.entryLen[e] = len;

  let held = 0;
  for (let x = s.nodeFirstEntry[node]!; x !== NONE; x = s.entryNextInNode[x]!) {
    const l = s.entryLen[x]!;
    if (l > held) held = l;
  }
  if (held < s.nodeLen[node]!) shrinkNode(s, node, held);
}

/** Longest entry on `node` other than `e` (what stays held if `e` goes). */
export function otherHeld(s: RadixStore, node: number, e: number): number {
  let held = 0;
  for (let x = s.nodeFirstEntry[node]!; x !== NONE; x = s.entryNextInNode[x]!) {
    const l = s.entryLen[x]!;
    if (x !== e && l > held) held = l;
  }
  return held;
}

/** Frees the chunks of a childless `node` past its first `keep`, and the node if `keep` is 0. */
function shrinkNode(s: RadixStore, node: number, keep: number): void {
  let c = s.nodeFirstChunk[node]!;
  if (keep === 0) {
    s.nodeFirstChunk[node] = NONE;
  } else {
    for (let i = 1; i < keep; i++) c = s.chunkNextInLabel[c]!;
    const last = c;
    c = s.chunkNextInLabel[last]!;
    s.chunkNextInLabel[last] = NONE;
  }
  while (c !== NONE) {
    const next = s.chunkNextInLabel[c]!;
    s.freeChunk(c);
    c = next;
  }
  s.nodeLen[node] = keep;
  if (keep === 0) {
    s.unlinkChild(node);
    s.freeNode(node);
  }
}
