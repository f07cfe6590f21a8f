/**
 * Whether one probe of the capacity search passes: the fleet, replaying the workload at one
 * offered rate, meets the latency objective and keeps up. Three rules, all over the replay's
 * own results (`PolicyResult`), so a probe's verdict can be re-derived from its JSON:
 *
 * 1. Objective: the TTFT quantile the objective names (`p90:2000`: p90 <= 2,000 ms), over every
 *    request of the replay.
 * 2. Keeps up: over the second half of the arrival window (the first half is warm-up: caches
 *    fill, queues form), the fleet's requests in system (arrived, not finished: running or
 *    waiting, summed over origins, from the report-tick timeline), fitted by least squares,
 *    rise by at most 3% of the half's arrivals. By conservation arrivals - completions over
 *    the half is that count's rise, so the rule bounds the throughput lost to 3% (completions
 *    >= 0.97 x arrivals) without a drain tail. It used to read the rise off the two endpoints
 *    (completions against arrivals in the half), but the count swings by its own size from one
 *    bucket to the next (a burst of arrivals just before the half ends has not finished), so on
 *    a 666-request window a fleet with no queue at all failed by ten requests
 *    (synthetic-8, issue 20). The fit over the half's ~50 buckets measures the same rise with
 *    less of that noise, and the rule counts only the part of it beyond two standard errors
 *    (from the count's scatter around the line, buckets taken as independent): on a window a
 *    few end-to-end times long the count follows the trace's own bursts (synthetic-8 at 7
 *    requests/s: 31 to 68 around a mean of 43 over a 48 s half, no queue), while a fleet that
 *    falls behind climbs steadily, so its rise dwarfs its scatter.
 * 3. Backlog not growing: the engines' queue (requests waiting for admission, summed over
 *    origins, from the report-tick timeline) over the same half, fitted by least squares; it is
 *    growing if the fitted rise across the half, less two standard errors as in rule 2, exceeds
 *    both a third of its mean there and 1% of the half's arrivals. Waiting requests, not running ones: running requests are bounded
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

/** Completions / arrivals over the second half that count as keeping up: the requests in
 * system may rise by at most (1 - this) x the half's arrivals. */
export const KEEP_UP_RATIO = 0.97;

/** Standard errors of the fitted rise discounted as noise before rule 2 counts it. */
export const NOISE_SE = 2;

export interface InSystem {
  /** Mean of the fleet's requests in system (running or waiting) over the second half. */
  mean: number;
  /** Least-squares rise of that count across the second half (requests). */
  rise: number;
  /** The rise's standard error, from the count's scatter around the fitted line. */
  se: number;
}

export interface Backlog {
  /** Mean of the fleet's waiting requests over the second half. */
  mean: number;
  /** Least-squares rise of the backlog across the second half (requests). */
  rise: number;
  /** The rise's standard error. */
  se: number;
  growing: boolean;
}

export interface Verdict {
  objectiveMet: boolean;
  keepsUp: boolean;
  inSystem: InSystem;
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

/** Least-squares line of ys over xs: its slope and the slope's standard error from the
 * residuals (both 0 with fewer than three distinct xs). */
function fitLine(xs: readonly number[], ys: readonly number[]): { slope: number; se: number } {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const my = ys.reduce((a, b) => a + b, 0) / Math.max(1, n);
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    sxx += ((xs[i] as number) - mx) ** 2;
  }
  if (!(sxx > 0)) return { slope: 0, se: 0 };
  const slope = sxy / sxx;
  let sse = 0;
  for (let i = 0; i < n; i++) {
    sse += ((ys[i] as number) - my - slope * ((xs[i] as number) - mx)) ** 2;
  }
  return { slope, se: n > 2 ? Math.sqrt(sse / (n - 2) / sxx) : 0 };
}

const tenth = (x: number) => Math.round(x * 10) / 10;

/** A fleet-wide timeline series over the second half: its mean, least-squares rise across the
 * half and that rise's standard error. */
function fitOverHalf(p: PolicyResult, series: readonly number[]): InSystem {
  const { fromMs, toMs } = p.secondHalf;
  const { bucketMs } = p.timeline;
  const xs: number[] = [];
  const ys: number[] = [];
  series.forEach((v, b) => {
    // Buckets wholly inside the half; each is the mean of its report ticks.
    if (b * bucketMs < fromMs || (b + 1) * bucketMs > toMs) return;
    xs.push((b + 0.5) * bucketMs);
    ys.push(v);
  });
  const mean = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
  const { slope, se } = fitLine(xs, ys);
  return {
    mean: tenth(mean),
    rise: tenth(slope * (toMs - fromMs)),
    se: tenth(se * (toMs - fromMs)),
  };
}

/** The fleet's queue over the second half of the arrival window, from the timeline. */
export function backlogOf(p: PolicyResult): Backlog {
  const { mean, rise, se } = fitOverHalf(p, p.timeline.waiting);
  const beyondNoise = rise - NOISE_SE * se;
  return {
    mean,
    rise,
    se,
    growing: beyondNoise > mean / 3 && beyondNoise > 0.01 * p.secondHalf.arrived,
  };
}

/** The fleet's requests in system over the second half: every origin's running + waiting. */
export function inSystemOf(p: PolicyResult): InSystem {
  const { outstanding } = p.timeline;
  const buckets = Math.max(0, ...outstanding.map((s) => s.length));
  const total = Array.from({ length: buckets }, (_, b) =>
    outstanding.reduce((a, s) => a + (s[b] ?? 0), 0),
  );
  return fitOverHalf(p, total);
}

export function verdictOf(p: PolicyResult, objective: Objective): Verdict {
  const objectiveMet = p.ttftMs[objective.quantile] <= objective.ms;
  const inSystem = inSystemOf(p);
  const allowed = (1 - KEEP_UP_RATIO) * p.secondHalf.arrived;
  const keepsUp = inSystem.rise - NOISE_SE * inSystem.se <= allowed;
  const backlog = backlogOf(p);
  return {
    objectiveMet,
    keepsUp,
    inSystem,
    backlog,
    pass: objectiveMet && keepsUp && !backlog.growing,
  };
}
