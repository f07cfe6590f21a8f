/**
 * The edge benchmark's unit of work, plain data so it crosses to a worker thread: one seed's
 * pair of replays (edge-pair.ts). A worker keeps the last workload it built, since the tasks of
 * one run share their workload per seed.
 */
import { withSeed, workloadOf } from "../run/runner.ts";
import type { Workload } from "../workload/workload.ts";
import { type EdgeSpec, runPair, type SeedPair } from "./edge-pair.ts";

export type EdgeTask = { kind: "pair"; spec: EdgeSpec; seed: number };
export type EdgeTaskResult = SeedPair;

let cached: { key: string; workload: Workload } | null = null;

function workloadFor(spec: EdgeSpec, seed: number): Workload {
  const s = withSeed(spec.bench, seed);
  const key = JSON.stringify(s);
  if (cached?.key !== key) cached = { key, workload: workloadOf(s) };
  return cached.workload;
}

export function runEdgeTask(task: EdgeTask): EdgeTaskResult {
  return runPair(task.spec, task.seed, workloadFor(task.spec, task.seed));
}
