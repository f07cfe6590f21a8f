/**
 * Runs every requested policy over one workload and assembles the benchmark's JSON. Policies are
 * independent replays, so they run in worker threads, at most `threads` at a time (the machine
 * has 2 cores), each worker building the workload once; with `threads: 0` they run in this
 * thread (tests). Results come back in the requested policy order whatever finishes first, and
 * nothing time-dependent enters them, so one seed gives byte-identical JSON.
 *
 * A policy that reads the settings' prefill speed (information.ts) is replayed once per
 * `prefillCalibration` factor, labelled `cost x0.7` (plain `cost` at 1); the others once.
 */
import { Worker } from "node:worker_threads";
import { type PolicyType, policyOf } from "../../src/core/policies/index.ts";
import { round } from "../report/stats.ts";
import type { ArrivalMode } from "../trace/arrivals.ts";
import { fleetOracleHitRate, infiniteOracleHitRate } from "../workload/oracle.ts";
import { buildWorkload, loadTrace, type TraceSource, type Workload } from "../workload/workload.ts";
import { type SimConfig, simulatePolicy } from "./fleet-sim.ts";
import {
  type FleetPart,
  fleetChunks,
  formatFleet,
  nominalProfile,
  originProfiles,
} from "./gpu-fleet.ts";
import { informationOf, READS_PREFILL_SPEED } from "./information.ts";
import type { PdFleet } from "./pd-fleet.ts";
import type { BenchResult, PolicyResult } from "./result-types.ts";

/** Everything a replay depends on; plain data, so it crosses to a worker unchanged. */
export interface BenchSpec {
  source: TraceSource;
  /** Label of the trace in the results. */
  trace: string;
  limit?: number | undefined;
  /**
   * A recorded trace's sample: requests [from, to) of it as fractions
   * (bench/sim/capacity/samples.ts).
   */
  window?: { from: number; to: number } | null | undefined;
  arrivals: ArrivalMode;
  load: number;
  origins: number;
  profile: string;
  /** A mixed fleet (`--fleet`, gpu-fleet.ts): its parts sum to `origins`; absent: `profile`. */
  fleet?: readonly FleetPart[] | null | undefined;
  /** A mixed fleet's settings: one speed, the fleet's mean (default), or each origin's own. */
  fleetPrior?: "mean" | "exact" | undefined;
  chunkTokens: number;
  seed: number;
  /** This router's webhooks: period and delay (the reporter's `--interval`, network). */
  reportIntervalMs: number;
  reportDelayMs: number;
  /** Delay of what baselines read from engines directly: scrapes, polls, KV events. */
  engineDelayMs: number;
  /** Settings' prefill speed = profile nominal x each factor (policies that read it). */
  prefillCalibration: readonly number[];
  /** Output lengths times this (default 1: the trace's). */
  outputScale?: number | undefined;
  /** A P/D fleet: prefill + decode = origins (absent or null: aggregated). */
  pd?: PdFleet | null | undefined;
}

/** One replay: a policy, the calibration of its settings' prefill speed, and its label. */
export interface PolicyRun {
  policy: PolicyType;
  prefillCalibration: number;
  label: string;
  /** The policy's parameters beyond its defaults (e.g. tuned ones, bench/sim/capacity/tuned.ts). */
  params?: Record<string, unknown> | undefined;
}

/** The replays a run makes: policies in order, calibration variants next to each other. */
export function policyRuns(spec: BenchSpec, policies: readonly PolicyType[]): PolicyRun[] {
  return policies.flatMap((policy) => {
    if (!READS_PREFILL_SPEED.has(policy)) return [{ policy, prefillCalibration: 1, label: policy }];
    return spec.prefillCalibration.map((f) => ({
      policy,
      prefillCalibration: f,
      label: f === 1 ? policy : `${policy} x${f}`,
    }));
  });
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
    window: spec.window,
    arrivals: spec.arrivals,
    seed: spec.seed,
    load: spec.load,
    origins: spec.origins,
    profile: nominalProfile(spec),
    chunkTokens: spec.chunkTokens,
    outputScale: spec.outputScale ?? 1,
  });
}

/** The router's profile and, for a mixed fleet, each origin's engine (gpu-fleet.ts). */
export function simProfiles(
  spec: BenchSpec,
): Pick<SimConfig, "profile" | "originProfiles" | "exactSpeeds"> {
  return {
    profile: nominalProfile(spec),
    originProfiles: spec.fleet ? originProfiles(spec) : undefined,
    exactSpeeds: spec.fleetPrior === "exact",
  };
}

/** One policy's replay; `routing` says who routes it if not the pool's one router (routing-front.ts). */
export function runPolicy(
  w: Workload,
  spec: BenchSpec,
  run: PolicyType | PolicyRun,
  onProgress?: (completed: number) => void,
  routing: Pick<SimConfig, "front" | "pool" | "routeDelayMs"> = {},
): PolicyResult {
  const { policy, prefillCalibration, label, params } =
    typeof run === "string" ? { policy: run, prefillCalibration: 1, label: run, params: {} } : run;
  const information = informationOf(policy, { ...spec, prefillCalibration });
  const result = simulatePolicy(
    w,
    {
      policy: policyOf(policy, params),
      origins: spec.origins,
      ...simProfiles(spec),
      seed: spec.seed,
      information,
      pd: spec.pd ?? null,
      ...routing,
    },
    onProgress,
  );
  return { ...result, policy: label, information };
}

export async function runBenchmark(
  spec: BenchSpec,
  policies: readonly PolicyType[],
  options: RunOptions,
): Promise<BenchResult> {
  const w = options.workload ?? workloadOf(spec);
  const progress = options.onProgress ?? (() => {});
  const runs = policyRuns(spec, policies);
  const results =
    options.threads > 0
      ? runInWorkers(spec, runs, options.threads, progress)
      : Promise.resolve(runs.map((r, i) => runPolicy(w, spec, r, (done) => progress(i, done))));
  const capacityChunks = fleetChunks(spec, spec.chunkTokens);
  const oracleHitRate = round(infiniteOracleHitRate(w), 4);
  const fleetOracle = round(fleetOracleHitRate(w, capacityChunks), 4);
  return {
    trace: spec.trace,
    profile: spec.profile,
    fleet: spec.fleet ? formatFleet(spec.fleet) : null,
    origins: spec.origins,
    load: spec.load,
    arrivals: spec.arrivals,
    seed: spec.seed,
    requests: w.size,
    chunkTokens: spec.chunkTokens,
    timeScale: round(w.timeScale, 6),
    reportIntervalMs: spec.reportIntervalMs,
    reportDelayMs: spec.reportDelayMs,
    engineDelayMs: spec.engineDelayMs,
    outputScale: spec.outputScale ?? 1,
    pd: spec.pd ? { prefill: spec.pd.prefill, decode: spec.pd.decode, mode: spec.pd.mode } : null,
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
  policies: readonly PolicyRun[],
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
