/**
 * The distinct prompt chunks of the requests in flight at each origin, counted once however
 * many requests share them: the KV blocks those requests pin, as NVIDIA Dynamo's router tracks
 * them (`ActiveSequences`: a shared system prompt occupies its blocks once). Reference counts per
 * chunk hash; a request's partial last chunk (tokens past its last full chunk) is its own block.
 *
 * Only pools whose policy reads it keep one (`usesActiveChunks` in policies/index.ts): it costs a
 * map entry per distinct in-flight chunk and O(chunks) per lease and release.
 */
export class ActiveChunks {
  readonly #counts: Map<number, number>[] = [];
  readonly #partial: number[] = [];

  /** A request of `hashes` (and a partial last chunk if `partial`) started at origin `i`. */
  add(i: number, hashes: ArrayLike<number>, partial: boolean): void {
    let counts = this.#counts[i];
    if (!counts) {
      counts = new Map();
      this.#counts[i] = counts;
    }
    for (let k = 0; k < hashes.length; k++) {
      const h = hashes[k] as number;
      counts.set(h, (counts.get(h) ?? 0) + 1);
    }
    if (partial) this.#partial[i] = (this.#partial[i] ?? 0) + 1;
  }

  /** That request ended. */
  remove(i: number, hashes: ArrayLike<number>, partial: boolean): void {
    const counts = this.#counts[i];
    if (!counts) return;
    for (let k = 0; k < hashes.length; k++) {
      const h = hashes[k] as number;
      const n = (counts.get(h) ?? 0) - 1;
      if (n > 0) counts.set(h, n);
      else counts.delete(h);
    }
    if (partial) this.#partial[i] = Math.max(0, (this.#partial[i] ?? 0) - 1);
  }

  /** Blocks the in-flight requests at origin `i` occupy, shared chunks once. */
  distinct(i: number): number {
    return (this.#counts[i]?.size ?? 0) + (this.#partial[i] ?? 0);
  }

  /** Blocks a request of `hashes` (+ a partial chunk) would add at origin `i`. */
  added(i: number, hashes: ArrayLike<number>, partial: boolean): number {
    const counts = this.#counts[i];
    let n = partial ? 1 : 0;
    for (let k = 0; k < hashes.length; k++) if (!counts?.has(hashes[k] as number)) n++;
    return n;
  }

  /** Forget origin `i`. */
  clear(i: number): void {
    delete this.#counts[i];
    delete this.#partial[i];
  }
}
