/**
 * @module
 * A fixed-bucket histogram, as Prometheus exposes one: upper bounds in base units (seconds),
 * a count per bucket, a sum and a count. Plain data (`HistogramData`), so it crosses Workers RPC
 * in the object's state; the pool's object keeps one per figure for every isolate's requests.
 * `quantile` estimates like PromQL's `histogram_quantile`: linear inside the bucket.
 */

export interface HistogramData {
  /** Upper bounds, ascending; a last bucket above them is implied (`+Inf`). */
  readonly bounds: readonly number[];
  /** Per bucket, not cumulative: `counts.length === bounds.length + 1`. */
  readonly counts: number[];
  sum: number;
  count: number;
}

export function histogram(bounds: readonly number[]): HistogramData {
  for (let i = 1; i < bounds.length; i++) {
    if (!((bounds[i] as number) > (bounds[i - 1] as number))) {
      throw new RangeError(`histogram bounds must ascend: ${bounds.join(", ")}`);
    }
  }
  return { bounds, counts: new Array(bounds.length + 1).fill(0), sum: 0, count: 0 };
}

export function observe(h: HistogramData, value: number): void {
  if (!Number.isFinite(value)) return;
  let i = 0;
  while (i < h.bounds.length && value > (h.bounds[i] as number)) i++;
  h.counts[i] = (h.counts[i] as number) + 1;
  h.sum += value;
  h.count++;
}

/**
 * The q-quantile (0..1), or null without observations. Values in the last bucket report its
 * lower bound: the histogram knows nothing above it.
 */
export function quantile(h: HistogramData, q: number): number | null {
  if (h.count === 0) return null;
  const rank = q * h.count;
  let seen = 0;
  for (let i = 0; i < h.counts.length; i++) {
    const n = h.counts[i] as number;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : (h.bounds[i - 1] as number);
      if (i === h.bounds.length) return lower;
      const upper = h.bounds[i] as number;
      return lower + ((upper - lower) * (rank - seen)) / n;
    }
    seen += n;
  }
  return h.bounds.at(-1) ?? 0;
}
