/**
 * One probe of the capacity search: the workload replayed at one offered rate for one policy
 * and seed, reduced to what the search and its auditor need. The rate is a multiple of the
 * workload's own arrivals: the arrival times at load 1 (`--load`'s prefill-only measure) scaled,
 * so a probe's load, the time scale over the trace's recorded arrivals and its requests/s are
 * three names for one knob.
 */

import { type CoordinationSetup, routingOf } from "../../../sim/edge/coordination.ts";
import type { PolicyResult } from "../../../sim/fleet/result-types.ts";
import { type BenchSpec, runPolicy } from "../../../sim/fleet/runner.ts";
import { round } from "../../../sim/report/stats.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import type { PolicyType } from "../../../src/core/policies/index.ts";
import { type Objective, type Verdict, verdictOf } from "./verdict.ts";

export interface ProbeTask {
  /** The workload's spec at load 1 (its `load` is 1). */
  spec: BenchSpec;
  policy: PolicyType;
  /** Parameters beyond the policy's defaults (absent: none). */
  params?: Record<string, unknown> | undefined;
  /** Settings' prefill speed = nominal x this, for policies that read it (absent: 1). */
  prefillCalibration?: number | undefined;
  /** Offered requests/s. */
  rateRps: number;
  objective: Objective;
  /** Routed as this coordination mode runs it (sim/edge/coordination.ts); absent: the pool's one
   * router with no network time, as `npm run bench` replays. */
  coordination?: CoordinationSetup | undefined;
}

export interface ProbeRecord {
  /** Offered requests/s: requests / arrival window. */
  offeredRps: number;
  /** The same rate as `--load` measures it (offered prefill work / fleet prefill capacity). */
  load: number;
  /** The same rate as a multiple of the trace's (or generator's) own arrival rate. */
  traceRate: number;
  /** Completions per second over the second half of the arrival window. */
  achievedRps: number;
  /** Arrivals per second over the same half (the trace's rate varies over its length). */
  halfOfferedRps: number;
  hitRate: number;
  ttftMs: PolicyResult["ttftMs"];
  verdict: Verdict;
}

/** Requests per second of a workload's arrival window (0 for a single instant). */
export function offeredRps(w: Workload): number {
  const span = w.size > 0 ? (w.arrivalMs[w.size - 1] as number) - (w.arrivalMs[0] as number) : 0;
  return span > 0 ? (w.size * 1000) / span : 0;
}

/** `base` (built at load 1) with its arrivals scaled to offer `rateRps`. */
export function atRate(base: Workload, rateRps: number): Workload {
  const stretch = offeredRps(base) / rateRps;
  return {
    ...base,
    arrivalMs: base.arrivalMs.map((t) => t * stretch),
    timeScale: base.timeScale * stretch,
  };
}

export function runProbe(base: Workload, task: ProbeTask): ProbeRecord {
  const w = atRate(base, task.rateRps);
  const routing = task.coordination ? routingOf(w, task.coordination, task.spec.seed) : {};
  const run = {
    policy: task.policy,
    prefillCalibration: task.prefillCalibration ?? 1,
    label: task.policy,
    params: task.params,
  };
  const p = runPolicy(w, task.spec, run, undefined, routing);
  const { fromMs, toMs, arrived, completed } = p.secondHalf;
  const halfS = Math.max(1e-9, (toMs - fromMs) / 1000);
  return {
    offeredRps: round(task.rateRps, 4),
    load: round(task.rateRps / offeredRps(base), 4),
    traceRate: round(1 / w.timeScale, 4),
    achievedRps: round(completed / halfS, 3),
    halfOfferedRps: round(arrived / halfS, 3),
    hitRate: p.hitRate,
    ttftMs: p.ttftMs,
    verdict: verdictOf(p, task.objective),
  };
}
