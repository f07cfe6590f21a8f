/**
 * Truncation: an origin stops holding a chunk and everything below it on its branch.
 *
 *   truncateAt(N, 1, A): A drops N's chunks from offset 1, and all it holds below them
 *
 *   before                            after
 *     N [n0 n1 n2]  A:3  B:3            N [n0 n1 n2]  A:1  B:3
 *     ├─ X [x0 x1]  A:2                 └─ Y [y0]     B:1
 *     └─ Y [y0]     A:1  B:1
 *                                       X freed with x0, x1 (A was its only owner)
 *
 * Ownership is prefix-closed, so the subtree walk only enters nodes the origin has an entry on,
 * and trims entries deepest first (A@X and A@Y, then A@N) so each trimmed entry owns nothing below
 * it, as `trimEntry` requires. Not a hot path: it may allocate its walk stack.
 */

import { NONE, type RadixStore } from "./store.ts";
import { trimEntry } from "./trim-entry.ts";

/** Drops `origin`'s chunks at offset >= k of `node` and below; returns chunks of ownership removed. */
export function truncateAt(s: RadixStore, node: number, k: number, origin: number): number {
  const e = s.findEntry(node, origin);
  if (e === NONE || s.entryLen[e]! <= k) return 0;

  const owned: number[] = [];
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (let child = s.nodeFirstChild[n]!; child !== NONE; child = s.nodeNextSibling[child]!) {
      const x = s.findEntry(child, origin);
      if (x !== NONE) {
        owned.push(x);
        stack.push(child);
      }
    }
  }
  let removed = 0;
  // Pre-order reversed: every entry is trimmed after all of its origin's entries below it.
  for (let i = owned.length - 1; i >= 0; i--) {
    const x = owned[i]!;
    const len = s.entryLen[x]!;
    removed += len;
    trimEntry(s, x, len);
  }
  const by = s.entryLen[e]! - k;
  trimEntry(s, e, by);
  return removed + by;
}
