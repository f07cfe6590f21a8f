/**
 * Seeded samplers for the workload generators, over the core's sfc32 `Rng` so a seed replays a
 * workload exactly: exponential gaps (Poisson arrivals), log-normal lengths (the shape of LLM
 * prompt and output lengths in the Azure and ShareGPT traces) and Zipf popularity.
 */
import type { Rng } from "../../src/core/rng.ts";

/** Exponential with the given mean (inverse CDF). */
export function exponential(rng: Rng, mean: number): number {
  return -mean * Math.log(1 - rng.next());
}

/** Log-normal with the given median and log-space sigma, rounded, at least `min`. */
export function logNormal(rng: Rng, median: number, sigma: number, min = 1): number {
  // Box-Muller; 1 - next() keeps the log argument in (0, 1].
  const z = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Math.max(min, Math.round(median * Math.exp(sigma * z)));
}

/** Sampler of ranks 0..n-1 with P(k) proportional to 1/(k+1)^s. */
export function zipf(n: number, s: number): (rng: Rng) => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += 1 / (k + 1) ** s;
    cdf[k] = sum;
  }
  return (rng) => {
    const u = rng.next() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
