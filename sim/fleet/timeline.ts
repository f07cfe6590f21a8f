/**
 * Load over time, sampled at every report tick and averaged over fixed buckets of simulated
 * time: per origin, requests running or waiting (the report's hot-prefix picture); over the
 * fleet, requests waiting for admission (the queue `bench:capacity` watches for growth: unlike
 * running requests, bounded by KV and batch slots, it grows without bound when the fleet falls
 * behind).
 */
import { round } from "../report/stats.ts";

class Buckets {
  readonly #sums: number[] = [];
  readonly #counts: number[] = [];

  add(b: number, value: number): void {
    this.#sums[b] = (this.#sums[b] ?? 0) + value;
    this.#counts[b] = (this.#counts[b] ?? 0) + 1;
  }

  get length(): number {
    return this.#sums.length;
  }

  /** Averages per bucket over `length` buckets (0 for a bucket without samples). */
  means(length: number): number[] {
    return Array.from({ length }, (_, b) => {
      const n = this.#counts[b] ?? 0;
      return n > 0 ? round((this.#sums[b] as number) / n, 1) : 0;
    });
  }
}

export class Timeline {
  readonly bucketMs: number;
  readonly #outstanding: Buckets[];
  /** Per bucket, samples of the fleet's waiting requests, one per origin per tick. */
  readonly #waiting = new Buckets();
  readonly #origins: number;

  constructor(origins: number, bucketMs: number) {
    this.bucketMs = bucketMs;
    this.#origins = origins;
    this.#outstanding = Array.from({ length: origins }, () => new Buckets());
  }

  sample(origin: number, t: number, outstanding: number, waiting: number): void {
    const b = Math.floor(t / this.bucketMs);
    this.#outstanding[origin]?.add(b, outstanding);
    this.#waiting.add(b, waiting);
  }

  /** Averages per origin per bucket (0 for a bucket without samples). */
  series(): number[][] {
    const buckets = Math.max(0, ...this.#outstanding.map((s) => s.length));
    return this.#outstanding.map((s) => s.means(buckets));
  }

  /** The fleet's waiting requests per bucket: the per-origin average times the origins. */
  waiting(): number[] {
    return this.#waiting.means(this.#waiting.length).map((v) => round(v * this.#origins, 1));
  }
}
