/**
 * A finished replay reduced to its `PolicyResult`: hit rate from the engines' own cached-token
 * counts, TTFT and end-to-end quantiles, throughput, imbalance of prefill work, and the rates and
 * counters that explain them.
 */
import type { Engine, EngineRequest } from "../engine/engine.ts";
import { quantile, round } from "../report/stats.ts";
import { interTokenLatency, spreadOf } from "./inter-token.ts";
import type { PdFleet } from "./pd-fleet.ts";
import type { PdResult, PolicyResult } from "./result-types.ts";
import type { Timeline } from "./timeline.ts";

export interface Replay {
  policy: string;
  ids: readonly string[];
  /**
   * Each request's engine request, by index; in an overload replay (client-front.ts) a request
   * that was never served has none or an unfinished one, and is left out of every figure.
   */
  requests: readonly (EngineRequest | undefined)[];
  /** Each disaggregated request's prefill leg (its prefill engine's request). */
  prefillLegs: readonly (EngineRequest | undefined)[];
  /** A P/D fleet's layout, decisions and KV transfer times; null when aggregated. */
  pd: { fleet: PdFleet; reasons: Record<string, number>; transferMs: number[] } | null;
  routedTo: Int32Array;
  prefilled: Float64Array;
  engines: readonly Engine[];
  overflows: number;
  fallbacks: number;
  expired: number;
  reasons: Record<string, number>;
  accuracy: { predictedTokens: number; cachedTokens: number };
  timeline: Timeline;
  queueEstimate: PolicyResult["queueEstimate"];
}

export function summarise(r: Replay): PolicyResult {
  const served: EngineRequest[] = [];
  const index: number[] = [];
  r.requests.forEach((q, i) => {
    if (q && !Number.isNaN(q.finishMs)) {
      served.push(q);
      index.push(i);
    }
  });
  const n = served.length;
  const ttft = new Float64Array(n);
  const e2e = new Float64Array(n);
  let cached = 0;
  let prompt = 0;
  let firstArrival = Number.POSITIVE_INFINITY;
  let lastFinish = 0;
  const perOrigin = r.ids.map((id, o) => ({
    id,
    requests: 0,
    prefilledTokens: r.prefilled[o] as number,
  }));
  served.forEach((q, k) => {
    const i = index[k] as number;
    ttft[k] = q.firstTokenMs - q.arrivalMs;
    e2e[k] = q.finishMs - q.arrivalMs;
    // A decode engine counts the KV it was sent as cached; the prefill engine's hit saved work.
    cached += (r.prefillLegs[i] ?? q).cachedTokens;
    prompt += q.promptTokens;
    firstArrival = Math.min(firstArrival, q.arrivalMs);
    lastFinish = Math.max(lastFinish, q.finishMs);
    (perOrigin[r.routedTo[i] as number] as { requests: number }).requests++;
  });
  const lastArrival = served.reduce((a, q) => Math.max(a, q.arrivalMs), 0);
  const fromMs = Number.isFinite(firstArrival) ? (firstArrival + lastArrival) / 2 : 0;
  const inHalf = (t: number) => t >= fromMs && t <= lastArrival;
  const secondHalf = {
    fromMs: round(fromMs, 1),
    toMs: round(lastArrival, 1),
    arrived: served.filter((q) => inHalf(q.arrivalMs)).length,
    completed: served.filter((q) => inHalf(q.finishMs)).length,
  };
  ttft.sort();
  e2e.sort();
  const mean = ttft.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const work = perOrigin.map((o) => o.prefilledTokens);
  const meanWork = work.reduce((a, b) => a + b, 0) / Math.max(1, work.length);
  const ms = (x: number) => round(x, 1);
  const engineTime = r.engines.length * Math.max(1, lastFinish - firstArrival);
  const busy = r.engines.reduce((a, e) => a + e.busyMs, 0);
  const prefillBusy = r.engines.reduce((a, e) => a + e.prefillBusyMs, 0);
  const gaps = r.engines.map((e) => e.gaps);
  const { itlMs, tpotMs, maxGapMs } = interTokenLatency(served, gaps);
  return {
    policy: r.policy,
    hitRate: round(prompt > 0 ? cached / prompt : 0, 4),
    ttftMs: {
      mean: ms(mean),
      p50: ms(quantile(ttft, 0.5)),
      p90: ms(quantile(ttft, 0.9)),
      p99: ms(quantile(ttft, 0.99)),
    },
    e2eMs: { p50: ms(quantile(e2e, 0.5)), p99: ms(quantile(e2e, 0.99)) },
    itlMs,
    tpotMs,
    itlMaxGapMs: maxGapMs,
    throughputRps: round(
      lastFinish > firstArrival ? (n * 1000) / (lastFinish - firstArrival) : 0,
      3,
    ),
    secondHalf,
    imbalance: round(meanWork > 0 ? Math.max(...work) / meanWork : 1, 3),
    overflowRate: round(n > 0 ? r.overflows / n : 0, 4),
    fallbackRate: round(n > 0 ? r.fallbacks / n : 0, 4),
    reasons: Object.fromEntries(Object.entries(r.reasons).sort(([a], [b]) => (a < b ? -1 : 1))),
    indexAccuracy: {
      predictedTokens: r.accuracy.predictedTokens,
      cachedTokens: r.accuracy.cachedTokens,
    },
    queueEstimate: r.queueEstimate,
    utilisation: { busy: round(busy / engineTime, 3), prefill: round(prefillBusy / engineTime, 3) },
    preemptions: r.engines.reduce((a, e) => a + e.preemptions, 0),
    evictedBlocks: r.engines.reduce((a, e) => a + e.cache.evictions, 0),
    expiredLeases: r.expired,
    perOrigin,
    ttftCdfMs: Array.from({ length: 101 }, (_, k) => ms(quantile(ttft, k / 100))),
    timeline: {
      bucketMs: round(r.timeline.bucketMs, 1),
      outstanding: r.timeline.series(),
      waiting: r.timeline.waiting(),
      ...byArrival(served, r.timeline.bucketMs),
    },
    pd: r.pd && pdResult(r.pd, n),
  };
}

/** Per bucket of arrival time: the requests that arrived in it and their mean TTFT (0 where
 * none arrived), the series `bench:capacity`'s keep-up rule fits (a backlog shows as a rising
 * wait per request, a rising arrival rate at steady service does not). */
function byArrival(
  served: readonly EngineRequest[],
  bucketMs: number,
): { arrivals: number[]; ttftByArrivalMs: number[] } {
  const arrivals: number[] = [];
  const sums: number[] = [];
  for (const q of served) {
    const b = Math.floor(q.arrivalMs / bucketMs);
    arrivals[b] = (arrivals[b] ?? 0) + 1;
    sums[b] = (sums[b] ?? 0) + (q.firstTokenMs - q.arrivalMs);
  }
  const counts = Array.from(arrivals, (n) => n ?? 0);
  return {
    arrivals: counts,
    ttftByArrivalMs: counts.map((n, b) => (n > 0 ? round((sums[b] as number) / n, 1) : 0)),
  };
}

function pdResult(pd: NonNullable<Replay["pd"]>, requests: number): PdResult {
  const { mean, p50, p99 } = spreadOf(pd.transferMs);
  return {
    reasons: Object.fromEntries(Object.entries(pd.reasons).sort(([a], [b]) => (a < b ? -1 : 1))),
    remoteRate: round(requests > 0 ? pd.transferMs.length / requests : 0, 4),
    wholeOnPrefillRate: round(
      requests > 0 ? (pd.reasons["pd:whole-on-prefill"] ?? 0) / requests : 0,
      4,
    ),
    kvTransferMs: { mean, p50, p99 },
  };
}
