/**
 * Runs every requested policy over one workload and assembles the benchmark's JSON. Policies are
 * independent replays, so they run in worker threads, at most `threads` at a time (the machine
 * has 2 cores), each worker building the workload once; with `threads: 0` they run in this
 * thread (tests). Results come back in the requested policy order whatever finishes first, and
 * nothing time-dependent enters them, so one seed gives byte-identical JSON.
 */
import { Worker } from "node:worker_threads";
import { profileNamed } from "../../../sim/engine/profiles.ts";
import { round } from "../../../sim/report/stats.ts";
import type { ArrivalMode } from "../../../sim/trace/arrivals.ts";
import { type PolicyType, policyOf } from "../../../src/core/policies/index.ts";
import { fleetOracleHitRate, infiniteOracleHitRate } from "../workload/oracle.ts";
import { buildWorkload, loadTrace, type TraceSource, type Workload } from "../workload/workload.ts";
import { simulatePolicy } from "./fleet-sim.ts";
import type { BenchResult, PolicyResult } from "./result-types.ts";

/** Everything a replay depends on; plain data, so it crosses to a worker unchanged. */
export interface BenchSpec {
  source: TraceSource;
  /** Label of the trace in the results. */
  trace: string;
  limit?: number | undefined;
  arrivals: ArrivalMode;
  load: number;
  origins: number;
  profile: string;
  chunkTokens: number;
  seed: number;
  reportIntervalMs: number;
  reportDelayMs: number;
}

export interface RunOptions {
  threads: number;
  /** The spec's workload if the caller already built it. */
  workload?: Workload;
  /** Completed requests of the policy at `index` so far. */
  onProgress?: (index: number, completed: number) => void;
}

/** `spec` under another seed: the router's, the arrival jitter's and a generator's. */
export function withSeed(spec: BenchSpec, seed: number): BenchSpec {
  const source = spec.source.kind === "synthetic" ? { ...spec.source, seed } : spec.source;
  return { ...spec, source, seed };
}

export function workloadOf(spec: BenchSpec): Workload {
  return buildWorkload(loadTrace(spec.source), {
    limit: spec.limit,
    arrivals: spec.arrivals,
    seed: spec.seed,
    load: spec.load,
    origins: spec.origins,
    profile: profileNamed(spec.profile),
    chunkTokens: spec.chunkTokens,
  });
}

export function runPolicy(
  w: Workload,
  spec: BenchSpec,
  policy: PolicyType,
  onProgress?: (completed: number) => void,
): PolicyResult {
  return simulatePolicy(
    w,
    {
      policy: policyOf(policy),
      origins: spec.origins,
      profile: profileNamed(spec.profile),
      seed: spec.seed,
      reportIntervalMs: spec.reportIntervalMs,
      reportDelayMs: spec.reportDelayMs,
    },
    onProgress,
  );
}

export async function runBenchmark(
  spec: BenchSpec,
  policies: readonly PolicyType[],
  options: RunOptions,
): Promise<BenchResult> {
  const w = options.workload ?? workloadOf(spec);
  const profile = profileNamed(spec.profile);
  const progress = options.onProgress ?? (() => {});
  const results =
    options.threads > 0
      ? runInWorkers(spec, policies, options.threads, progress)
      : Promise.resolve(policies.map((p, i) => runPolicy(w, spec, p, (done) => progress(i, done))));
  const capacityChunks = spec.origins * Math.floor(profile.kvCapacityTokens / spec.chunkTokens);
  const oracleHitRate = round(infiniteOracleHitRate(w), 4);
  const fleetOracle = round(fleetOracleHitRate(w, capacityChunks), 4);
  return {
    trace: spec.trace,
    profile: spec.profile,
    origins: spec.origins,
    load: spec.load,
    arrivals: spec.arrivals,
    seed: spec.seed,
    requests: w.size,
    chunkTokens: spec.chunkTokens,
    timeScale: round(w.timeScale, 6),
    reportIntervalMs: spec.reportIntervalMs,
    reportDelayMs: spec.reportDelayMs,
    oracleHitRate,
    fleetOracleHitRate: fleetOracle,
    results: await results,
  };
}

type WorkerReply =
  | { type: "progress"; index: number; completed: number }
  | { type: "result"; index: number; result: PolicyResult }
  | { type: "error"; index: number; message: string };

function runInWorkers(
  spec: BenchSpec,
  policies: readonly PolicyType[],
  threads: number,
  progress: (index: number, completed: number) => void,
): Promise<PolicyResult[]> {
  const results: PolicyResult[] = new Array(policies.length);
  let next = 0;
  let finished = 0;
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    const fail = (error: Error) => {
      for (const w of workers) void w.terminate();
      reject(error);
    };
    const feed = (worker: Worker) => {
      if (next < policies.length) {
        const index = next++;
        worker.postMessage({ spec, policy: policies[index], index });
      } else {
        void worker.terminate();
      }
    };
    const count = Math.min(threads, policies.length);
    if (count === 0) resolve(results);
    for (let k = 0; k < count; k++) {
      const worker = new Worker(new URL("./worker.ts", import.meta.url));
      workers.push(worker);
      worker.on("error", fail);
      worker.on("message", (reply: WorkerReply) => {
        if (reply.type === "progress") return progress(reply.index, reply.completed);
        if (reply.type === "error") return fail(new Error(reply.message));
        results[reply.index] = reply.result;
        if (++finished === policies.length) resolve(results);
        feed(worker);
      });
      feed(worker);
    }
  });
}
