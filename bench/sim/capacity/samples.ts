/**
 * Independent workload samples for a capacity run: each seed replays its own part of the
 * workload, so the spread over seeds is a spread over workloads, not only over arrival jitter.
 *
 * - A recorded trace is cut in two halves by request order: `tune` is the first, `report` the
 *   second (disjoint, so figures reported are never the ones parameters were chosen on). Without
 *   `--split`, the whole trace. Seed k of K replays the k-th of K equal, disjoint windows of its
 *   part (one seed: the whole part).
 * - A generated workload draws fresh requests per seed already; `report` shifts the generator's
 *   seed by REPORT_SEED_OFFSET so the two splits never share a seed.
 */
import { type BenchSpec, withSeed } from "../../../sim/fleet/runner.ts";

export const SPLITS = ["tune", "report"] as const;
export type Split = (typeof SPLITS)[number];

/** Generator seeds of the report split: seed + this (tune: seed itself). */
export const REPORT_SEED_OFFSET = 1_000_000;

/** The share of a recorded trace each split covers, as fractions of its requests. */
export function splitRange(split: Split | null): { from: number; to: number } {
  if (split === "tune") return { from: 0, to: 0.5 };
  if (split === "report") return { from: 0.5, to: 1 };
  return { from: 0, to: 1 };
}

/** Seed `seeds[k]`'s workload: its window of the split (recorded) or its generator seed. */
export function sampleSpec(
  spec: BenchSpec,
  seeds: readonly number[],
  k: number,
  split: Split | null,
): BenchSpec {
  const seed = seeds[k] as number;
  const seeded = withSeed(spec, seed);
  if (spec.source.kind === "synthetic") {
    const shift = split === "report" ? REPORT_SEED_OFFSET : 0;
    return { ...seeded, source: { ...spec.source, seed: seed + shift }, window: null };
  }
  const { from, to } = splitRange(split);
  const width = (to - from) / seeds.length;
  const window = {
    from: from + k * width,
    to: k === seeds.length - 1 ? to : from + (k + 1) * width,
  };
  return { ...seeded, window: window.from === 0 && window.to === 1 ? null : window };
}
