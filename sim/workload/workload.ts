/**
 * A replayable workload: a trace (file or generator) turned into what the simulator feeds the
 * router and the engines, in flat typed arrays: arrival times after tie placing and load
 * scaling, prompt and output lengths, and each prompt's chunk hashes (seeded by the model name,
 * as the Worker seeds them). Building it is deterministic in its options.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { modelSeed } from "../../src/core/prompt/prompt-key.ts";
import type { EngineProfile } from "../engine/profiles.ts";
import { type ArrivalMode, arrivalTimes, loadScale } from "../trace/arrivals.ts";
import { parseAzure } from "../trace/azure.ts";
import { generateTrace } from "../trace/generators.ts";
import { parseMooncake } from "../trace/mooncake.ts";
import type { Trace } from "../trace/trace.ts";
import { chunkHashesOf } from "./chunk-hashes.ts";

export type TraceSource =
  | { kind: "mooncake" | "azure"; path: string }
  | { kind: "synthetic"; name: string; count: number; seed: number };

export interface WorkloadOptions {
  /** Replay only the first N requests. */
  limit?: number | undefined;
  /**
   * Then only this share of them, [from, to) as fractions (a workload sample;
   * bench/sim/capacity/samples.ts).
   */
  window?: { from: number; to: number } | null | undefined;
  arrivals: ArrivalMode;
  /** Seeds the "jitter" arrival mode. */
  seed: number;
  load: number;
  origins: number;
  profile: EngineProfile;
  chunkTokens: number;
  /** Output lengths times this (e.g. 4 for a long-output variant of a trace); default 1. */
  outputScale?: number | undefined;
}

export interface Workload {
  model: string;
  chunkTokens: number;
  size: number;
  arrivalMs: Float64Array;
  promptTokens: Int32Array;
  outputTokens: Int32Array;
  /** Request i's hashes are hashes[hashStart[i] .. hashStart[i+1]). */
  hashStart: Int32Array;
  hashes: Float64Array;
  /** Simulated ms per trace ms chosen by the load setting. */
  timeScale: number;
}

export function loadTrace(source: TraceSource): Trace {
  switch (source.kind) {
    case "mooncake":
      return parseMooncake(readFileSync(source.path, "utf8"), basename(source.path));
    case "azure":
      return parseAzure(readFileSync(source.path, "utf8"), basename(source.path));
    case "synthetic":
      return generateTrace(source.name, source.count, source.seed);
    default: {
      const unknown: never = source;
      throw new Error(`unknown trace source ${JSON.stringify(unknown)}`);
    }
  }
}

export function buildWorkload(trace: Trace, options: WorkloadOptions): Workload {
  const first = trace.records.slice(0, options.limit ?? trace.records.length);
  const { from, to } = options.window ?? { from: 0, to: 1 };
  const records = first.slice(Math.floor(from * first.length), Math.floor(to * first.length));
  const n = records.length;
  const raw = records.map((r) => r.timestampMs);
  const stamps = arrivalTimes(raw, options.arrivals, options.seed);
  const prompts = records.map((r) => r.inputTokens);
  const scale = loadScale(stamps, prompts, options.profile, options.origins, options.load);
  const start = stamps[0] ?? 0;
  const hashStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    hashStart[i + 1] =
      (hashStart[i] as number) +
      Math.floor((records[i] as (typeof records)[number]).inputTokens / options.chunkTokens);
  }
  const hashes = new Float64Array(hashStart[n] as number);
  const seed = modelSeed(options.profile.model);
  for (let i = 0; i < n; i++) {
    const r = records[i] as (typeof records)[number];
    const out = hashes.subarray(hashStart[i], hashStart[i + 1]);
    const chunks = chunkHashesOf(
      r.blockIds,
      trace.blockTokens,
      r.inputTokens,
      options.chunkTokens,
      seed,
      out,
    );
    if (chunks !== out.length) {
      throw new Error(
        `${trace.name}: request ${i} has blocks for ${chunks} of ${out.length} chunks`,
      );
    }
  }
  return {
    model: options.profile.model,
    chunkTokens: options.chunkTokens,
    size: n,
    arrivalMs: Float64Array.from(stamps, (t) => (t - start) * scale),
    promptTokens: Int32Array.from(prompts),
    outputTokens: Int32Array.from(records, (r) =>
      Math.max(1, Math.round(r.outputTokens * (options.outputScale ?? 1))),
    ),
    hashStart,
    hashes,
    timeScale: scale,
  };
}

export function hashesOf(w: Workload, i: number): Float64Array {
  return w.hashes.subarray(w.hashStart[i], w.hashStart[i + 1]);
}
