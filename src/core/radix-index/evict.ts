/**
 * Eviction: per-origin capacity and the global chunk budget, with the report of what went.
 *
 * The model is chunk-level LRU per origin. A touch moves a path's chunks to the recent end
 * deepest first, so an ancestor is always more recent than its descendants and an origin's
 * oldest chunk is always a leaf for that origin. Nodes are only ever touched whole (see
 * `split-node.ts`), so each entry holds a contiguous run of that chunk list, deepest oldest:
 *
 *   A's entries, LRU order (head first)   A@X [x0 x1]  ->  A@N [n0 n1 n2]  ->  ...
 *   A's chunks, oldest first              x1 x0            n2 n1 n0             ...
 *
 *   A over capacity by 3: trim the head entry from its deep end, then the next head
 *
 *   before                                after
 *     N [n0 n1 n2]  A:3  B:3                N [n0 n1 n2]  A:2  B:3
 *     └─ X [x0 x1]  A:2                     (X freed: A's entry went, nobody else held it)
 *
 * So evicting "the oldest chunk" is trimming the LRU head entry by one, and each loop below
 * takes as many chunks at once as the one-at-a-time rule would provably take from the same
 * entry: each turn is O(entries on one node).
 *
 * - Capacity: while owned(o) > capacity(o), trim o's head entry.
 * - Budget: while distinct chunks > maxChunks, trim the head entry of the origin whose head is
 *   oldest (smallest `entryLastUse`, ties to the lowest slot). Trimming a shared chunk may free
 *   nothing; the loop keeps going. Picking the origin scans the active origins: O(active).
 */

import type { RadixStore } from "./store.ts";
import { otherHeld, trimEntry } from "./trim-entry.ts";

/** Chunks of ownership an origin lost in one call. */
export interface Eviction {
  origin: number;
  chunks: number;
}

export const NO_EVICTIONS: readonly Eviction[] = Object.freeze([]);

/** Chunks evicted per origin during one call; drained into the returned `Eviction[]`. */
export class EvictionLog {
  readonly #counts: Int32Array;
  readonly #origins: Int32Array;
  #n = 0;

  constructor(maxOrigins: number) {
    this.#counts = new Int32Array(maxOrigins);
    this.#origins = new Int32Array(maxOrigins);
  }

  add(origin: number, chunks: number): void {
    if (this.#counts[origin] === 0) this.#origins[this.#n++] = origin;
    this.#counts[origin] = this.#counts[origin]! + chunks;
  }

  /** One row per origin, ascending by origin; the shared frozen empty array when none. */
  drain(): readonly Eviction[] {
    const n = this.#n;
    if (n === 0) return NO_EVICTIONS;
    const origins = this.#origins.subarray(0, n).sort();
    const out: Eviction[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const origin = origins[i]!;
      out[i] = { origin, chunks: this.#counts[origin]! };
      this.#counts[origin] = 0;
    }
    this.#n = 0;
    return out;
  }
}

export function evictToCapacity(s: RadixStore, o: number, log: EvictionLog): void {
  const cap = s.capacity[o]!;
  while (s.owned[o]! > cap) {
    const e = s.lruHead[o]!;
    const by = Math.min(s.owned[o]! - cap, s.entryLen[e]!);
    log.add(o, by);
    trimEntry(s, e, by);
  }
}

export function evictToBudget(s: RadixStore, maxChunks: number, log: EvictionLog): void {
  while (s.chunks > maxChunks) {
    let o = s.active[0]!;
    let use = s.entryLastUse[s.lruHead[o]!]!;
    for (let i = 1; i < s.activeCount; i++) {
      const p = s.active[i]!;
      const u = s.entryLastUse[s.lruHead[p]!]!;
      if (u < use || (u === use && p < o)) {
        o = p;
        use = u;
      }
    }
    const e = s.lruHead[o]!;
    const len = s.entryLen[e]!;
    const need = s.chunks - maxChunks;
    // Chunks past every other entry's length are freed one per trimmed chunk.
    const freeable = len - otherHeld(s, s.entryNode[e]!, e);
    const by = freeable >= need ? need : len;
    log.add(o, by);
    trimEntry(s, e, by);
  }
}
