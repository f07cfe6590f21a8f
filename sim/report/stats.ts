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

/**
 * The same nearest-rank q-quantile over a multiset given as ascending distinct-or-not `values`
 * with `weights` (how many samples each stands for): the value whose cumulative weight first
 * reaches rank ceil(q * total), clamped to [1, total]; 0 when empty.
 */
export function weightedQuantile(
  values: ArrayLike<number>,
  weights: ArrayLike<number>,
  q: number,
): number {
  let total = 0;
  for (let i = 0; i < weights.length; i++) total += weights[i] as number;
  if (total === 0) return 0;
  const rank = Math.min(total, Math.max(1, Math.ceil(q * total)));
  let seen = 0;
  for (let i = 0; i < values.length; i++) {
    seen += weights[i] as number;
    if (seen >= rank) return values[i] as number;
  }
  return values[values.length - 1] as number;
}

/** Round to `digits` decimals, so JSON stays readable and stable. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
