/**
 * @module
 * The pool's request metrics, kept by its Durable Object from the report every isolate sends
 * with `complete` (request-record/request-report.ts): requests by origin and outcome, by API,
 * engine-reported and predicted cached tokens (usage-sums.ts), failovers, fallbacks, requests
 * and prompt tokens per client key (key-counters.ts), and
 * latency histograms (the object's round trip, time to first byte), plus the recent time series
 * for the dashboard. The routing state (load, health, index, decisions, shadows) is the core's
 * `stats`; this is what only the Worker can measure. Counters start at zero when the object
 * starts: Prometheus' `rate()` handles the reset. Memory: per origin of the settings, plus
 * fixed histograms.
 */
import type { FailureKind } from "../../core/router/router-types.ts";
import {
  failovers,
  type LlmApiName,
  type RequestOutcome,
  type RequestReport,
} from "../request-record/request-report.ts";
import { type HistogramData, histogram, observe } from "./histogram.ts";
import { KeyCounterSet, type KeyCounters } from "./key-counters.ts";
import { type SeriesPoint, TimeSeries, TTFB_BOUNDS } from "./time-series.ts";
import { addUsage, cacheUsage, type UsageSums, usageSums } from "./usage-sums.ts";

/** The object's round trip, seconds (the pool's `routeTimeoutMs` defaults to 1 s). */
export const OBJECT_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Per origin: requests by outcome, the usage it reported, the failovers away from it. */
export interface OriginCounters extends UsageSums {
  requests: Partial<Record<RequestOutcome, number>>;
  /** Requests that left this origin for another, by why. */
  failovers: Partial<Record<FailureKind, number>>;
}

export interface PoolMetricsSnapshot {
  /** When these counters started (the object's start), ms since the epoch. */
  since: number;
  origins: Record<string, OriginCounters>;
  /** Requests by the API they came in by, and outcome. */
  apis: Partial<Record<LlmApiName, Partial<Record<RequestOutcome, number>>>>;
  /** Requests the Worker routed alone, by `fallback-*` reason. */
  fallbacks: Record<string, number>;
  /** Per client key id (the first 32 seen, then `other`), while client keys are enforced. */
  keys: Record<string, KeyCounters>;
  latency: { object: HistogramData; ttfb: HistogramData };
  series: { bucketMs: number; points: SeriesPoint[] };
}

const bump = <K extends string>(record: Partial<Record<K, number>>, key: K) => {
  record[key] = (record[key] ?? 0) + 1;
};

export class PoolMetrics {
  readonly #since: number;
  #origins = new Map<string, OriginCounters>();
  #apis: PoolMetricsSnapshot["apis"] = {};
  #fallbacks: Record<string, number> = {};
  #keys = new KeyCounterSet();
  #object = histogram(OBJECT_BOUNDS);
  #ttfb = histogram(TTFB_BOUNDS);
  #series = new TimeSeries();

  constructor(now: number) {
    this.#since = now;
  }

  #origin(id: string): OriginCounters {
    let c = this.#origins.get(id);
    if (!c) {
      c = { requests: {}, ...usageSums(), failovers: {} };
      this.#origins.set(id, c);
    }
    return c;
  }

  record(report: RequestReport, now: number): void {
    for (const f of failovers(report)) bump(this.#origin(f.origin).failovers, f.kind);
    if (report.origin !== null) bump(this.#origin(report.origin).requests, report.outcome);
    const api = report.api ?? "chat";
    const byApi = this.#apis[api] ?? {};
    this.#apis[api] = byApi;
    bump(byApi, report.outcome);
    const usage = cacheUsage(report);
    if (usage.origin !== null) addUsage(this.#origin(usage.origin), usage);
    if (report.fallback !== null) bump(this.#fallbacks, report.fallback);
    this.#keys.record(report);
    if (report.objectMs !== null) observe(this.#object, report.objectMs / 1000);
    if (report.ttfbMs !== undefined) observe(this.#ttfb, report.ttfbMs / 1000);
    this.#series.record(report, now);
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
      apis: Object.fromEntries(
        Object.entries(this.#apis).map(([api, outcomes]) => [api, { ...outcomes }]),
      ),
      fallbacks: { ...this.#fallbacks },
      keys: this.#keys.snapshot(),
      latency: { object: this.#object, ttfb: this.#ttfb },
      series: { bucketMs: this.#series.bucketMs, points: this.#series.points(now) },
    };
  }
}
