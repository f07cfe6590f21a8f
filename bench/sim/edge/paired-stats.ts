/**
 * Paired comparison over seeds: for each seed the ratio of a figure under edge coordination to
 * the same figure under the synchronous router on the same workload, then the mean ratio with
 * its 95% confidence interval (Student's t with n - 1 degrees of freedom: the ratios of
 * different seeds are independent, the two runs of one seed are not, which is why the ratio is
 * taken per seed). Seed noise of a figure (+-2.6% in hit rate between seeds on this simulator)
 * cancels in the ratio, which is what makes a 2% target measurable.
 */
import { round } from "../../../sim/report/stats.ts";

/** Two-sided 95% quantiles of Student's t by degrees of freedom 1..30 (beyond: 1.96). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145,
  2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048,
  2.045, 2.042,
];

export interface RatioStats {
  n: number;
  mean: number;
  /** 95% confidence interval of the mean ratio (equal to the mean with one seed). */
  lo: number;
  hi: number;
  min: number;
  max: number;
}

/** Mean and 95% CI of `xs` (a sample of independent values). */
export function meanInterval(xs: readonly number[]): RatioStats {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const variance = n > 1 ? xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1) : 0;
  const half = n > 1 ? (T975[n - 2] ?? 1.96) * Math.sqrt(variance / n) : 0;
  return {
    n,
    mean: round(mean, 4),
    lo: round(mean - half, 4),
    hi: round(mean + half, 4),
    min: round(Math.min(...xs), 4),
    max: round(Math.max(...xs), 4),
  };
}

/**
 * Per seed edge / sync, then their mean and 95% CI. A seed whose sync figure is 0 is skipped.
 * The interval's low end is clamped at 0: a ratio of non-negative figures is never negative,
 * though t's symmetric interval over a few noisy seeds reaches below it (2 seeds: t = 12.7).
 */
export function ratioStats(edge: readonly number[], sync: readonly number[]): RatioStats {
  const ratios: number[] = [];
  edge.forEach((e, i) => {
    const s = sync[i] as number;
    if (s !== 0) ratios.push(e / s);
  });
  const stats = meanInterval(ratios);
  return { ...stats, lo: Math.max(0, stats.lo) };
}

/** Seeds below which a 95% interval says nothing (2 seeds: the mean +- 12.7 standard errors). */
export const MIN_SEEDS_FOR_CI = 3;

/**
 * A ratio for the tables: `mean [lo, hi]` (the 95% CI) from 3 seeds up; with fewer, the mean,
 * the seeds' range and "no CI", never an interval too wide to mean anything; "n/a" without one.
 */
export function formatRatio(r: RatioStats): string {
  if (r.n === 0) return "n/a";
  const mean = r.mean.toFixed(3);
  if (r.n >= MIN_SEEDS_FOR_CI) return `${mean} [${r.lo.toFixed(3)}, ${r.hi.toFixed(3)}]`;
  if (r.n === 1) return `${mean} (1 seed, no CI)`;
  return `${mean} (${r.min.toFixed(3)}-${r.max.toFixed(3)}, ${r.n} seeds, no CI)`;
}
