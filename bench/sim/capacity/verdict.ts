/**
 * Whether one probe of the capacity search passes: the fleet, replaying the workload at one
 * offered rate, meets the latency objective and keeps up. Three rules, all over the replay's
 * own results (`PolicyResult`), so a probe's verdict can be re-derived from its JSON:
 *
 * 1. Objective: the TTFT quantile the objective names (`p90:2000`: p90 <= 2,000 ms), over every
 *    request of the replay.
 * 2. Keeps up: over the second half of the arrival window (the first half is warm-up: caches
 *    fill, queues form), the requests' time to first token, by arrival time (mean per timeline
 *    bucket, fitted by least squares), rises by at most 3% of the half's duration, beyond two
 *    standard errors (from the means' scatter around the line, buckets taken as independent).
 *    A fleet that completes only a fraction 1 - f of the arrivals gains f x arrivals of queue
 *    per second, which it serves at (1 - f) x arrivals, so each later request waits f / (1 - f)
 *    seconds more per second of arrivals: the rule bounds the throughput lost to 3% as the old
 *    count rule did, but by Little's law (in system = arrival rate x time in system) it reads
 *    the time, which a rising arrival rate at a steady service time leaves flat. Until issue
 *    20's keep-up follow-up the rule fitted the requests in system, whose rise is arrivals -
 *    completions over the half; on a recorded trace the arrival rate is not stationary, so the
 *    count followed it (conversation-16: 95 -> 174 across a half at p90 1.5 s with almost no
 *    queue, drained to 3 within 12 s of the last arrival) and every window's search stopped on
 *    that rule for every policy. Time to first token, not end-to-end time: decode slows as
 *    batches grow with the rate, while a backlog is waiting, before the first token. The
 *    trend means something only if the half is long against the wait: the mean TTFT of the
 *    half's arrivals must be at most half the half's duration, or the fleet does not keep up.
 *    On a short window far past capacity (synthetic-8, 666 requests at 25 requests/s: a 13 s
 *    half, waits of 16 s, 300 queued, completions a quarter of arrivals) the half's arrivals
 *    all wait out the half behind one standing queue, their wait flat or falling, and without
 *    that bound the no-objective keep-up ceiling passed there, above the oracle ceiling.
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

/** Completions / arrivals over the second half that count as keeping up: the time to first
 * token may rise by at most (1 - this) / this x the half's duration. */
export const KEEP_UP_RATIO = 0.97;

/** The longest mean wait for a first token, as a share of the second half's duration, over
 * which rule 2's trend is read at all: beyond it the fleet does not keep up. */
export const MAX_WAIT_SHARE = 0.5;

/** Standard errors of a fitted rise discounted as noise before rules 2 and 3 count it. */
export const NOISE_SE = 2;

/** A series' mean over the second half, its least-squares rise across the half, the rise's
 * standard error from the series' scatter around the fitted line. */
export interface Trend {
  mean: number;
  rise: number;
  se: number;
}

/** The fleet's waiting requests over the second half: their trend, and rule 3's reading. */
export interface Backlog extends Trend {
  growing: boolean;
}

export interface Verdict {
  objectiveMet: boolean;
  keepsUp: boolean;
  /** Mean TTFT (ms) of the requests arriving in each bucket of the second half, its trend. */
  ttftTrend: Trend;
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
 * half and that rise's standard error, over the buckets `counted` keeps. */
function fitOverHalf(
  p: PolicyResult,
  series: readonly number[],
  counted: (b: number) => boolean = () => true,
): Trend {
  const { fromMs, toMs } = p.secondHalf;
  const { bucketMs } = p.timeline;
  const xs: number[] = [];
  const ys: number[] = [];
  series.forEach((v, b) => {
    // Buckets wholly inside the half; each is the mean of its report ticks.
    if (b * bucketMs < fromMs || (b + 1) * bucketMs > toMs || !counted(b)) return;
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

/** The time to first token by arrival time over the second half, over buckets with arrivals. */
export function ttftTrendOf(p: PolicyResult): Trend {
  const { arrivals, ttftByArrivalMs } = p.timeline;
  return fitOverHalf(p, ttftByArrivalMs, (b) => (arrivals[b] ?? 0) > 0);
}

export function verdictOf(p: PolicyResult, objective: Objective): Verdict {
  const objectiveMet = p.ttftMs[objective.quantile] <= objective.ms;
  const ttftTrend = ttftTrendOf(p);
  const halfMs = p.secondHalf.toMs - p.secondHalf.fromMs;
  const allowedMs = ((1 - KEEP_UP_RATIO) / KEEP_UP_RATIO) * halfMs;
  const keepsUp =
    ttftTrend.mean <= MAX_WAIT_SHARE * halfMs &&
    ttftTrend.rise - NOISE_SE * ttftTrend.se <= allowedMs;
  const backlog = backlogOf(p);
  return {
    objectiveMet,
    keepsUp,
    ttftTrend,
    backlog,
    pass: objectiveMet && keepsUp && !backlog.growing,
  };
}
