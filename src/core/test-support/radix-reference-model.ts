/**
 * Test-only reference model of the radix index: the chunk-level semantics written the naive
 * way (maps and arrays, O(n) everywhere), for the property tests to compare against.
 *
 * Each origin has an array of the chunks it holds, oldest first, each stamped with the `now`
 * of its last touch. A chunk is named by its hash (the index keeps hashes unique) and remembers
 * its parent's hash, so a request holds a prefix only if it follows those parent links from the
 * root: this pins the collision guard too, for any request, chained or not.
 * - insert: the path is the held prefix, then new chunks up to the first hash already in the index
 *   or earlier in the request (collision guard); touch the path deepest first (each chunk moves to
 *   the recent end), then evict the origin's oldest chunks while owned > capacity, then, while
 *   distinct chunks > maxChunks, evict the oldest chunk of the origin whose oldest chunk has the
 *   smallest `now` (ties: lowest slot).
 * - truncate: drop the origin's chunk at depth `keep` and every chunk it holds below it.
 * Evictions are reported merged per origin, ascending by origin.
 */

import type { Eviction } from "../radix-index/evict.ts";

interface Held {
  key: number;
  t: number;
}

export class ReferenceModel {
  readonly maxOrigins: number;
  maxChunks: number;
  readonly lists: Held[][] = [];
  readonly caps: number[] = [];
  /** Origins holding each chunk. */
  readonly refs = new Map<number, number>();
  /** Parent hash of each chunk (-1 at depth 0), set when the chunk is created. */
  readonly parent = new Map<number, number>();

  constructor(maxOrigins: number, maxChunks: number) {
    this.maxOrigins = maxOrigins;
    this.maxChunks = maxChunks;
    for (let o = 0; o < maxOrigins; o++) {
      this.lists.push([]);
      this.caps.push(Number.POSITIVE_INFINITY);
    }
  }

  get chunks(): number {
    return this.refs.size;
  }

  get ownerships(): number {
    return this.lists.reduce((sum, l) => sum + l.length, 0);
  }

  owned(o: number): number {
    return this.lists[o]!.length;
  }

  holds(o: number, key: number): boolean {
    return this.lists[o]!.some((h) => h.key === key);
  }

  match(hashes: readonly number[], out: Int32Array): number {
    out.fill(0);
    let best = 0;
    for (let o = 0; o < this.maxOrigins; o++) {
      let d = 0;
      while (d < hashes.length && this.#follows(hashes, d) && this.holds(o, hashes[d]!)) d++;
      if (o < out.length) out[o] = d;
      best = Math.max(best, d);
    }
    return best;
  }

  insert(hashes: readonly number[], o: number, now: number): Eviction[] {
    const list = this.lists[o]!;
    let end = this.#heldPrefix(hashes);
    const seen = new Set(hashes.slice(0, end));
    for (; end < hashes.length; end++) {
      const key = hashes[end]!;
      if (this.refs.has(key) || seen.has(key)) break;
      seen.add(key);
      this.parent.set(key, end === 0 ? -1 : hashes[end - 1]!);
    }
    for (let i = end - 1; i >= 0; i--) {
      const key = hashes[i]!;
      const at = list.findIndex((h) => h.key === key);
      if (at >= 0) list.splice(at, 1);
      else this.refs.set(key, (this.refs.get(key) ?? 0) + 1);
      list.push({ key, t: now });
    }
    const log = new Map<number, number>();
    this.#evictToCapacity(o, log);
    this.enforceBudget(log);
    return report(log);
  }

  setCapacity(o: number, cap: number): Eviction[] {
    this.caps[o] = cap;
    const log = new Map<number, number>();
    this.#evictToCapacity(o, log);
    return report(log);
  }

  truncate(hashes: readonly number[], o: number, keep: number): number {
    if (keep >= hashes.length || this.#heldPrefix(hashes) <= keep) return 0;
    const cut = hashes[keep]!;
    const doomed = this.lists[o]!.filter((h) => this.#isUnder(h.key, cut));
    for (const h of doomed) this.#drop(o, h.key);
    return doomed.length;
  }

  removeOrigin(o: number): number {
    const n = this.lists[o]!.length;
    for (const h of [...this.lists[o]!]) this.#drop(o, h.key);
    return n;
  }

  /** The global budget rule on its own (also what `restore` with a lower maxChunks applies). */
  enforceBudget(log = new Map<number, number>()): void {
    while (this.refs.size > this.maxChunks) {
      let pick = -1;
      for (let o = 0; o < this.maxOrigins; o++) {
        const head = this.lists[o]![0];
        if (head === undefined) continue;
        if (pick < 0 || head.t < this.lists[pick]![0]!.t) pick = o;
      }
      this.#evictOldest(pick, log);
    }
  }

  #evictToCapacity(o: number, log: Map<number, number>): void {
    while (this.lists[o]!.length > this.caps[o]!) this.#evictOldest(o, log);
  }

  #evictOldest(o: number, log: Map<number, number>): void {
    this.#drop(o, this.lists[o]![0]!.key);
    log.set(o, (log.get(o) ?? 0) + 1);
  }

  #drop(o: number, key: number): void {
    const list = this.lists[o]!;
    list.splice(
      list.findIndex((h) => h.key === key),
      1,
    );
    const n = this.refs.get(key)! - 1;
    if (n === 0) this.refs.delete(key);
    else this.refs.set(key, n);
  }

  /** Whether `hashes[d]` is held with `hashes[d - 1]` (or the root) as its parent. */
  #follows(hashes: readonly number[], d: number): boolean {
    const key = hashes[d]!;
    return this.refs.has(key) && this.parent.get(key) === (d === 0 ? -1 : hashes[d - 1]);
  }

  /** Length of the longest prefix of `hashes` that anyone holds. */
  #heldPrefix(hashes: readonly number[]): number {
    let d = 0;
    while (d < hashes.length && this.#follows(hashes, d)) d++;
    return d;
  }

  /** Whether `key` is `ancestor` or below it. */
  #isUnder(key: number, ancestor: number): boolean {
    for (let k = key; k !== -1; k = this.parent.get(k)!) if (k === ancestor) return true;
    return false;
  }
}

function report(log: Map<number, number>): Eviction[] {
  return [...log.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([origin, chunks]) => ({ origin, chunks }));
}
