/**
 * Per-origin load over time for the report's hot-prefix picture: requests running or waiting at
 * each origin, sampled at every report tick and averaged over fixed buckets of simulated time.
 */
import { round } from "../../../sim/report/stats.ts";

export class Timeline {
  readonly bucketMs: number;
  #sums: number[][];
  #counts: number[][];

  constructor(origins: number, bucketMs: number) {
    this.bucketMs = bucketMs;
    this.#sums = Array.from({ length: origins }, () => []);
    this.#counts = Array.from({ length: origins }, () => []);
  }

  sample(origin: number, t: number, value: number): void {
    const b = Math.floor(t / this.bucketMs);
    const sums = this.#sums[origin] as number[];
    const counts = this.#counts[origin] as number[];
    sums[b] = (sums[b] ?? 0) + value;
    counts[b] = (counts[b] ?? 0) + 1;
  }

  /** Averages per origin per bucket (0 for a bucket without samples). */
  series(): number[][] {
    const buckets = Math.max(0, ...this.#sums.map((s) => s.length));
    return this.#sums.map((sums, o) =>
      Array.from({ length: buckets }, (_, b) => {
        const n = this.#counts[o]?.[b] ?? 0;
        return n > 0 ? round((sums[b] as number) / n, 1) : 0;
      }),
    );
  }
}
