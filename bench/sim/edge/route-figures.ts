/**
 * Figures of one replay computed from its requests as the engines saw them and where each went,
 * the same way for the synchronous router and for edge coordination, so they pair:
 *
 * - hit rate and TTFT (nearest-rank quantiles), over the replay or over requests arriving in a
 *   time window (an outage and the minute after it);
 * - imbalance per 10 s: over windows of 10 s of arrivals with at least one request per origin,
 *   the busiest origin's requests over the mean; the worst window and the 90th percentile;
 * - hot prefix share: in each 10 s window, the prefix most requests start with (their first 4
 *   chunks, about 256 tokens) if at least 2 per origin do; the largest share of them on one
 *   origin, over its overflow bound min(1, 1.25 / (origins x f)), f the prefix's share of the
 *   window's requests: the share at which its origin would pass prefix-hash's bounded load
 *   (1.25 x the mean) on that prefix alone. Above 1 is above the bound; the worst window.
 */
import type { EngineRequest } from "../../../sim/engine/engine.ts";
import { quantile, round } from "../../../sim/report/stats.ts";
import { hashesOf, type Workload } from "../../../sim/workload/workload.ts";

const WINDOW_MS = 10_000;
const HOT_DEPTH = 4;
const BOUNDED_LOAD = 1.25;

export interface Served {
  readonly requests: readonly EngineRequest[];
  readonly routedTo: Int32Array;
}

export interface WindowFigures {
  requests: number;
  hitRate: number;
  ttftMs: { p50: number; p99: number };
}

export interface RouteFigures extends WindowFigures {
  ttftMeanMs: number;
  imbalance10s: { max: number; p90: number };
  hotShare: { maxOverBound: number; share: number; bound: number };
}

/** Hit rate and TTFT of the requests arriving in [fromMs, toMs). */
export function windowFigures(run: Served, fromMs = 0, toMs = Infinity): WindowFigures {
  let cached = 0;
  let prompt = 0;
  const ttft: number[] = [];
  for (const r of run.requests) {
    if (r.arrivalMs < fromMs || r.arrivalMs >= toMs) continue;
    cached += r.cachedTokens;
    prompt += r.promptTokens;
    ttft.push(r.firstTokenMs - r.arrivalMs);
  }
  const sorted = Float64Array.from(ttft).sort();
  return {
    requests: ttft.length,
    hitRate: round(prompt > 0 ? cached / prompt : 0, 4),
    ttftMs: { p50: round(quantile(sorted, 0.5), 1), p99: round(quantile(sorted, 0.99), 1) },
  };
}

export function routeFigures(w: Workload, run: Served, origins: number): RouteFigures {
  const all = windowFigures(run);
  const ttftSum = run.requests.reduce((a, r) => a + (r.firstTokenMs - r.arrivalMs), 0);
  const windows = new Map<number, number[]>();
  run.requests.forEach((r, i) => {
    const b = Math.floor(r.arrivalMs / WINDOW_MS);
    let list = windows.get(b);
    if (!list) {
      list = [];
      windows.set(b, list);
    }
    list.push(i);
  });
  const ratios: number[] = [];
  let hot = { maxOverBound: 0, share: 0, bound: 1 };
  for (const members of windows.values()) {
    if (members.length < origins) continue;
    const perOrigin = new Array<number>(origins).fill(0);
    for (const i of members)
      perOrigin[run.routedTo[i] as number] = (perOrigin[run.routedTo[i] as number] as number) + 1;
    ratios.push(Math.max(...perOrigin) / (members.length / origins));
    const worst = hotShareOf(w, run, members, origins);
    if (worst && worst.maxOverBound > hot.maxOverBound) hot = worst;
  }
  const sortedRatios = Float64Array.from(ratios).sort();
  return {
    ...all,
    ttftMeanMs: round(run.requests.length > 0 ? ttftSum / run.requests.length : 0, 1),
    imbalance10s: {
      max: round(quantile(sortedRatios, 1), 3),
      p90: round(quantile(sortedRatios, 0.9), 3),
    },
    hotShare: {
      maxOverBound: round(hot.maxOverBound, 3),
      share: round(hot.share, 3),
      bound: round(hot.bound, 3),
    },
  };
}

function hotShareOf(w: Workload, run: Served, members: readonly number[], origins: number) {
  const byPrefix = new Map<number, number[]>();
  for (const i of members) {
    const hashes = hashesOf(w, i);
    if (hashes.length === 0) continue;
    const key = hashes[Math.min(HOT_DEPTH, hashes.length) - 1] as number;
    let list = byPrefix.get(key);
    if (!list) {
      list = [];
      byPrefix.set(key, list);
    }
    list.push(i);
  }
  let hottest: number[] = [];
  for (const list of byPrefix.values()) if (list.length > hottest.length) hottest = list;
  if (hottest.length < 2 * origins) return null;
  const perOrigin = new Array<number>(origins).fill(0);
  for (const i of hottest)
    perOrigin[run.routedTo[i] as number] = (perOrigin[run.routedTo[i] as number] as number) + 1;
  const share = Math.max(...perOrigin) / hottest.length;
  const f = hottest.length / members.length;
  const bound = Math.min(1, BOUNDED_LOAD / (origins * f));
  return { maxOverBound: share / bound, share, bound };
}
