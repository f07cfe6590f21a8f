/**
 * A figure over several seeds: its mean, minimum and maximum (`--seeds K`), and per policy the
 * spread of a benchmark's headline figures over runs that differ only in their seed.
 */

import type { BenchResult, PolicyResult } from "../../../sim/fleet/result-types.ts";
import { round } from "../../../sim/report/stats.ts";
import { formatTable } from "../../../sim/report/table.ts";

export interface Spread {
  mean: number;
  min: number;
  max: number;
}

export function spreadOf(values: readonly number[]): Spread {
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  return {
    mean: round(mean, 4),
    min: round(Math.min(...values), 4),
    max: round(Math.max(...values), 4),
  };
}

/** `mean (min-max)` with `digits` decimals, or just the mean when every seed agrees. */
export function formatSpread(s: Spread, digits: number): string {
  const f = (v: number) =>
    v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return s.min === s.max ? f(s.mean) : `${f(s.mean)} (${f(s.min)}-${f(s.max)})`;
}

export interface PolicySpread {
  policy: string;
  hitRate: Spread;
  ttftMs: { mean: Spread; p50: Spread; p90: Spread; p99: Spread };
  throughputRps: Spread;
}

/** Per policy, the spread over `runs` (one workload, one run per seed) of its headline figures. */
export function policySpreads(runs: readonly BenchResult[]): PolicySpread[] {
  const policies = runs[0]?.results.map((p) => p.policy) ?? [];
  return policies.map((policy) => {
    const all = runs.flatMap((r) => r.results.filter((p) => p.policy === policy));
    const of = (f: (p: PolicyResult) => number) => spreadOf(all.map(f));
    return {
      policy,
      hitRate: of((p) => p.hitRate),
      ttftMs: {
        mean: of((p) => p.ttftMs.mean),
        p50: of((p) => p.ttftMs.p50),
        p90: of((p) => p.ttftMs.p90),
        p99: of((p) => p.ttftMs.p99),
      },
      throughputRps: of((p) => p.throughputRps),
    };
  });
}

export function spreadTable(spreads: readonly PolicySpread[]): string {
  const header = ["policy", "hit", "TTFT mean", "p50", "p90", "p99 ms", "req/s"];
  const rows = spreads.map((s) => [
    s.policy,
    formatSpread(s.hitRate, 4),
    formatSpread(s.ttftMs.mean, 0),
    formatSpread(s.ttftMs.p50, 0),
    formatSpread(s.ttftMs.p90, 0),
    formatSpread(s.ttftMs.p99, 0),
    formatSpread(s.throughputRps, 2),
  ]);
  return formatTable(rows, { header });
}
