/**
 * Whether one probe of the capacity search passes: the fleet, replaying the workload at one
 * offered rate, meets the latency objective and keeps up. Three rules, all over the replay's
 * own results (`PolicyResult`), so a probe's verdict can be re-derived from its JSON:
 *
 * 1. Objective: the TTFT quantile the objective names (`p90:2000`: p90 <= 2,000 ms), over every
 *    request of the replay.
 * 2. Keeps up: over the second half of the arrival window (the first half is warm-up: caches
 *    fill, queues form), completions >= 0.97 x arrivals. By conservation that ratio is the
 *    fleet's achieved rate over the offered one in that half, and unlike requests over (last
 *    completion - first arrival) it carries no drain tail, so it does not punish a short replay
 *    for its longest request.
 * 3. Backlog not growing: the engines' queue (requests waiting for admission, summed over
 *    origins, from the report-tick timeline) over the same half, fitted by least squares; it is
 *    growing if the fitted rise across the half exceeds both a third of its mean there and 1%
 *    of the half's arrivals. Waiting requests, not running ones: running requests are bounded
 *    by KV and batch slots and rise with the arrival rate and context lengths of a busy but
 *    healthy fleet (the sessions workload's do), while the queue grows without bound only when
 *    the fleet falls behind. A queue growing steadily from the start rises by 2/3 of its mean
 *    over the second half, one growing from mid-run by twice its mean, a stable one by noise;
 *    the 1% floor keeps a nearly idle fleet's noise (a rise of 1 on a mean of 2) out. Rule 2
 *    bounds the throughput lost; rule 3 catches a queue that grows slowly but for good (a loose
 *    objective would let it pass rule 1).
 */
import type { PolicyResult } from "../../../sim/fleet/result-types.ts";

export type ObjectiveQuantile = "p50" | "p90" | "p99";

export interface Objective {
  quantile: ObjectiveQuantile;
  ms: number;
}

/** No latency objective: only keeping up counts (the keep-up ceiling's search). */
export const NO_OBJECTIVE: Objective = { quantile: "p90", ms: Number.POSITIVE_INFINITY };

/** Completions / arrivals over the second half that count as keeping up. */
export const KEEP_UP_RATIO = 0.97;

export interface Backlog {
  /** Mean of the fleet's waiting requests over the second half. */
  mean: number;
  /** Least-squares rise of the backlog across the second half (requests). */
  rise: number;
  growing: boolean;
}

export interface Verdict {
  objectiveMet: boolean;
  keepsUp: boolean;
  backlog: Backlog;
  pass: boolean;
}

/** `p50|p90|p99:ms`, e.g. `p90:2000`; throws a message naming the flag's form otherwise. */
export function parseObjective(text: string): Objective {
  const m = /^(p50|p90|p99):(\d+(?:\.\d+)?)$/.exec(text.trim());
  const ms = Number(m?.[2]);
  if (!m || !(ms > 0)) {
    throw new Error(`--slo must be p50|p90|p99:MS with MS > 0 (e.g. p90:2000), got "${text}"`);
  }
  return { quantile: m[1] as ObjectiveQuantile, ms };
}

export function formatObjective(o: Objective): string {
  return Number.isFinite(o.ms) ? `${o.quantile}:${o.ms}` : "none";
}

/** Least-squares slope of ys over xs (0 with fewer than two distinct xs). */
function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const my = ys.reduce((a, b) => a + b, 0) / Math.max(1, n);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    sxx += ((xs[i] as number) - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

/** The fleet's queue over the second half of the arrival window, from the timeline. */
export function backlogOf(p: PolicyResult): Backlog {
  const { fromMs, toMs, arrived } = p.secondHalf;
  const { bucketMs, waiting } = p.timeline;
  const xs: number[] = [];
  const ys: number[] = [];
  waiting.forEach((v, b) => {
    // Buckets wholly inside the half; each is the mean of its report ticks.
    if (b * bucketMs < fromMs || (b + 1) * bucketMs > toMs) return;
    xs.push((b + 0.5) * bucketMs);
    ys.push(v);
  });
  const mean = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
  const rise = slope(xs, ys) * (toMs - fromMs);
  return {
    mean: Math.round(mean * 10) / 10,
    rise: Math.round(rise * 10) / 10,
    growing: rise > mean / 3 && rise > 0.01 * arrived,
  };
}

export function verdictOf(p: PolicyResult, objective: Objective): Verdict {
  const objectiveMet = p.ttftMs[objective.quantile] <= objective.ms;
  const { arrived, completed } = p.secondHalf;
  const keepsUp = completed >= KEEP_UP_RATIO * arrived;
  const backlog = backlogOf(p);
  return { objectiveMet, keepsUp, backlog, pass: objectiveMet && keepsUp && !backlog.growing };
}
