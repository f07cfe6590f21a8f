/**
 * The one quantile every Node-side figure uses (the benchmark's JSON and tables, `npm run
 * bench:core`, `npm start`'s summary), so "p99" means the same thing everywhere, and fixed
 * rounding for stable JSON.
 *
 * Nearest rank (Hyndman & Fan type 1, the "nearest-rank method"): the q-quantile of n sorted
 * samples is the sample of 1-based rank ceil(q * n), clamped to [1, n]; so it is always a
 * sample, q = 0 gives the minimum, q = 1 the maximum, and the p50 of [10, 20] is 10. With no
 * samples it is 0, so summaries of an empty replay stay finite numbers (JSON has no NaN); a
 * caller that must show "no data" checks the sample count. The Worker's `/metrics` histograms
 * are a different thing: bucket estimates (src/worker/pool-metrics/histogram.ts).
 */

/** Nearest-rank q-quantile, q in [0, 1], of an ascending array (0 when empty). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))] as number;
}

/** Round to `digits` decimals, so JSON stays readable and stable. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
