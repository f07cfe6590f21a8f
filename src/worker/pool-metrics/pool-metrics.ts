/**
 * @module
 * The pool's request metrics, kept by its Durable Object from the samples every isolate sends
 * with `complete` (see request-record/request-report.ts): requests by origin and outcome, engine-reported and
 * predicted cached tokens, failovers, fallbacks, and latency histograms (edge hashing, the
 * object's round trip, time to first byte), plus the recent time series for the dashboard.
 * The routing state (load, health, index, decisions, shadows) is the core's `stats`; this is
 * what only the Worker can measure. Counters start at zero when the object starts: Prometheus'
 * `rate()` handles the reset. Memory: per origin of the settings, plus fixed histograms.
 */
import type { FailureKind } from "../../core/router/router-types.ts";
import type { RequestOutcome, RequestSample } from "../request-record/request-report.ts";
import { type HistogramData, histogram, observe } from "./histogram.ts";
import { type SeriesPoint, TimeSeries, TTFB_BOUNDS } from "./time-series.ts";

/** Edge hashing, seconds: microseconds for a short chat, milliseconds for 100K tokens. */
export const HASH_BOUNDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
/** The object's round trip, seconds (the pool's `routeTimeoutMs` defaults to 1 s). */
export const OBJECT_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface OriginCounters {
  requests: Partial<Record<RequestOutcome, number>>;
  /** Completions whose usage reported cached tokens, and the token sums over them. */
  usageReports: number;
  promptTokens: number;
  cachedTokens: number;
  matchedTokens: number;
  /** Requests that left this origin for another, by why. */
  failovers: Partial<Record<FailureKind, number>>;
}

export interface PoolMetricsSnapshot {
  /** When these counters started (the object's start), ms since the epoch. */
  since: number;
  origins: Record<string, OriginCounters>;
  /** Requests the Worker routed alone, by `fallback-*` reason. */
  fallbacks: Record<string, number>;
  latency: { hash: HistogramData; object: HistogramData; ttfb: HistogramData };
  series: { bucketMs: number; points: SeriesPoint[] };
}

function counters(): OriginCounters {
  return {
    requests: {},
    usageReports: 0,
    promptTokens: 0,
    cachedTokens: 0,
    matchedTokens: 0,
    failovers: {},
  };
}

const bump = <K extends string>(record: Partial<Record<K, number>>, key: K) => {
  record[key] = (record[key] ?? 0) + 1;
};

export class PoolMetrics {
  readonly #since: number;
  #origins = new Map<string, OriginCounters>();
  #fallbacks: Record<string, number> = {};
  #hash = histogram(HASH_BOUNDS);
  #object = histogram(OBJECT_BOUNDS);
  #ttfb = histogram(TTFB_BOUNDS);
  #series = new TimeSeries();

  constructor(now: number) {
    this.#since = now;
  }

  #origin(id: string): OriginCounters {
    let c = this.#origins.get(id);
    if (!c) {
      c = counters();
      this.#origins.set(id, c);
    }
    return c;
  }

  record(sample: RequestSample, now: number): void {
    for (const f of sample.failovers) bump(this.#origin(f.origin).failovers, f.kind);
    if (sample.origin !== null) {
      const c = this.#origin(sample.origin);
      bump(c.requests, sample.outcome);
      if (sample.cachedTokens !== undefined) {
        c.usageReports++;
        c.promptTokens += sample.promptTokens ?? 0;
        c.cachedTokens += sample.cachedTokens;
        c.matchedTokens += sample.matchedTokens;
      }
    }
    if (sample.fallback !== null) bump(this.#fallbacks, sample.fallback);
    observe(this.#hash, sample.hashMs / 1000);
    if (sample.objectMs !== null) observe(this.#object, sample.objectMs / 1000);
    if (sample.ttfbMs !== undefined) observe(this.#ttfb, sample.ttfbMs / 1000);
    this.#series.record(sample, now);
  }

  /** Forget origins the settings no longer list, so removed origins do not pile up. */
  retainOrigins(ids: readonly string[]): void {
    const keep = new Set(ids);
    for (const id of this.#origins.keys()) if (!keep.has(id)) this.#origins.delete(id);
  }

  snapshot(now: number): PoolMetricsSnapshot {
    return {
      since: this.#since,
      origins: Object.fromEntries(this.#origins),
      fallbacks: { ...this.#fallbacks },
      latency: { hash: this.#hash, object: this.#object, ttfb: this.#ttfb },
      series: { bucketMs: this.#series.bucketMs, points: this.#series.points(now) },
    };
  }
}
