/** Small numeric helpers for the results: nearest-rank quantiles and fixed rounding. */

/** Nearest-rank quantile q in [0, 1] of an ascending array (0 when empty). */
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
