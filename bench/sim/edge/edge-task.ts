/**
 * The edge benchmark's units of work, plain data so they cross to a worker thread: one seed's
 * pair of replays (edge-pair.ts), or one protocol replay at a pool rate (edge-rate.ts). A
 * worker keeps the last workload it built, since the tasks of one run share their workload per
 * seed.
 */

import { withSeed, workloadOf } from "../../../sim/fleet/runner.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type EdgeSpec, runPair, type SeedPair } from "./edge-pair.ts";
import { type RateFigures, type RateSpec, runRate } from "./edge-rate.ts";

export type EdgeTask =
  | { kind: "pair"; spec: EdgeSpec; seed: number }
  | { kind: "rate"; spec: EdgeSpec; rate: RateSpec; seed: number };
export type EdgeTaskResult = SeedPair | RateFigures;

let cached: { key: string; workload: Workload } | null = null;

function workloadFor(spec: EdgeSpec, seed: number): Workload {
  const s = withSeed(spec.bench, seed);
  const key = JSON.stringify(s);
  if (cached?.key !== key) cached = { key, workload: workloadOf(s) };
  return cached.workload;
}

export function runEdgeTask(task: EdgeTask): EdgeTaskResult {
  const workload = workloadFor(task.spec, task.seed);
  if (task.kind === "rate") return runRate(task.spec, task.rate, workload, task.seed);
  return runPair(task.spec, task.seed, workload);
}
