/**
 * @module
 * The last few minutes of a pool's traffic in fixed time buckets (a ring), for the dashboard's
 * charts: requests, the engine-reported cached share of prompt tokens (hit rate), the router's
 * predicted share, and time to first byte. Held by the pool's object, so a page opened now
 * shows the recent past, and every isolate's requests count. Memory is fixed: `buckets` entries.
 */

import type { RequestReport } from "../request-record/request-report.ts";
import { type HistogramData, histogram, observe, quantile } from "./histogram.ts";
import { addUsage, cacheUsage, type UsageSums, usageSums } from "./usage-sums.ts";

/** Time to first byte bounds, seconds (shared with the pool's TTFB histogram). */
export const TTFB_BOUNDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Bucket extends UsageSums {
  start: number;
  requests: number;
  errors: number;
  ttfb: HistogramData;
}

export interface SeriesPoint {
  /** Bucket start, ms since the epoch. */
  at: number;
  requests: number;
  /** Requests whose outcome was not `ok`. */
  errors: number;
  /** Engine-reported cached / prompt tokens, over requests that reported usage; null if none. */
  hitRate: number | null;
  /** The router's predicted (matched) / prompt tokens over the same requests. */
  predictedRate: number | null;
  ttfbP50Ms: number | null;
  ttfbP95Ms: number | null;
}

function emptyBucket(start: number): Bucket {
  return { start, requests: 0, errors: 0, ...usageSums(), ttfb: histogram(TTFB_BOUNDS) };
}

const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1000));

export class TimeSeries {
  readonly bucketMs: number;
  #ring: (Bucket | undefined)[];

  constructor(bucketMs = 10_000, buckets = 60) {
    this.bucketMs = bucketMs;
    this.#ring = new Array(buckets);
  }

  #bucket(now: number): Bucket {
    const start = Math.floor(now / this.bucketMs) * this.bucketMs;
    const i = Math.floor(now / this.bucketMs) % this.#ring.length;
    let b = this.#ring[i];
    if (!b || b.start !== start) {
      b = emptyBucket(start);
      this.#ring[i] = b;
    }
    return b;
  }

  record(report: RequestReport, now: number): void {
    const b = this.#bucket(now);
    b.requests++;
    if (report.outcome !== "ok") b.errors++;
    addUsage(b, cacheUsage(report));
    if (report.ttfbMs !== undefined) observe(b.ttfb, report.ttfbMs / 1000);
  }

  /** Every bucket of the ring's span up to `now`, oldest first; empty ones read as zero. */
  points(now: number): SeriesPoint[] {
    const last = Math.floor(now / this.bucketMs);
    const out: SeriesPoint[] = [];
    for (let k = last - this.#ring.length + 1; k <= last; k++) {
      const start = k * this.bucketMs;
      const held = this.#ring[((k % this.#ring.length) + this.#ring.length) % this.#ring.length];
      const b = held && held.start === start ? held : emptyBucket(start);
      const prompt = b.promptTokens;
      out.push({
        at: start,
        requests: b.requests,
        errors: b.errors,
        hitRate: prompt > 0 ? b.cachedTokens / prompt : null,
        predictedRate: prompt > 0 ? b.matchedTokens / prompt : null,
        ttfbP50Ms: ms(quantile(b.ttfb, 0.5)),
        ttfbP95Ms: ms(quantile(b.ttfb, 0.95)),
      });
    }
    return out;
  }
}
