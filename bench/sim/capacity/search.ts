/**
 * The capacity search: the highest offered rate at which a probe passes, by bracketing then
 * bisecting on a log scale (rates are multiples of one another, so the resolution is a ratio).
 *
 * 1. Probe `start`. If it passes, step up by `step` until a probe fails; if it fails, step
 *    down until one passes. Steps stop at `min` and `max`.
 * 2. Bisect the bracket [lo passes, hi fails] at its geometric mean until hi / lo <= 1 +
 *    `resolution`.
 * Capacity is lo, the highest rate that passed; the true boundary lies in [lo, hi). A probe
 * count limit bounds the work: the search stops there with the bracket it has. Nothing assumes
 * that passing is monotone in the rate, but bisection trusts the bracket's two ends, so a noisy
 * boundary is found to within the noise, not the resolution.
 */

export interface SearchOptions {
  /** First rate probed (a previous seed's capacity, or a guess). */
  start: number;
  /** Bracketing step, a factor > 1. */
  step: number;
  /** Stop when hi / lo <= 1 + resolution. */
  resolution: number;
  min: number;
  max: number;
  maxProbes: number;
}

export type SearchStatus =
  /** lo passed, hi failed, hi / lo <= 1 + resolution. */
  | "bracketed"
  /** Even `min` failed: capacity 0 (below the searched range). */
  | "below-min"
  /** `max` passed: capacity >= max (above the searched range). */
  | "above-max"
  /** The probe limit came first; lo and hi are the bracket reached so far. */
  | "probe-limit";

export interface SearchOutcome {
  /** Highest rate that passed, 0 if none did. */
  capacity: number;
  /** Lowest rate that failed above it, null if none did. */
  failedAt: number | null;
  status: SearchStatus;
  /** Rates probed, in order. */
  rates: number[];
}

export async function searchCapacity(
  passes: (rate: number) => Promise<boolean>,
  o: SearchOptions,
): Promise<SearchOutcome> {
  if (!(o.step > 1 && o.resolution > 0 && o.min > 0 && o.max >= o.min && o.maxProbes >= 1)) {
    throw new Error(`searchCapacity: bad options ${JSON.stringify(o)}`);
  }
  const rates: number[] = [];
  const probe = (rate: number) => {
    rates.push(rate);
    return passes(rate);
  };
  const outcome = (lo: number, hi: number | null, status: SearchStatus): SearchOutcome => ({
    capacity: lo,
    failedAt: hi,
    status,
    rates,
  });
  let rate = Math.min(o.max, Math.max(o.min, o.start));
  let lo = 0;
  let hi: number | null = null;
  if (await probe(rate)) {
    lo = rate;
    while (hi === null) {
      if (lo >= o.max) return outcome(lo, null, "above-max");
      if (rates.length >= o.maxProbes) return outcome(lo, null, "probe-limit");
      rate = Math.min(o.max, lo * o.step);
      if (await probe(rate)) lo = rate;
      else hi = rate;
    }
  } else {
    hi = rate;
    while (lo === 0) {
      if (hi <= o.min) return outcome(0, hi, "below-min");
      if (rates.length >= o.maxProbes) return outcome(0, hi, "probe-limit");
      rate = Math.max(o.min, hi / o.step);
      if (await probe(rate)) lo = rate;
      else hi = rate;
    }
  }
  while (hi / lo > 1 + o.resolution) {
    if (rates.length >= o.maxProbes) return outcome(lo, hi, "probe-limit");
    rate = Math.sqrt(lo * hi);
    if (await probe(rate)) lo = rate;
    else hi = rate;
  }
  return outcome(lo, hi, "bracketed");
}
