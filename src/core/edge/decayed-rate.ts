/**
 * A request rate and mean prefill work, exponentially weighted (half-life `RATE_HALF_LIFE_MS`):
 * a decayed count c of events has mean age h / ln 2, so c * ln 2 / h is the rate. Coordinators
 * count the decisions they apply; replicas read the pool's rate to size how stale their view
 * may be (stale-pick.ts). O(1) per event, no clock of its own.
 */
import type { PoolRate } from "./sync-protocol.ts";

export const RATE_HALF_LIFE_MS = 10_000;

export class DecayedRate {
  #count = 0;
  #work = 0;
  #at: number | null = null;

  add(work: number, now: number): void {
    this.#decay(now);
    this.#count += 1;
    this.#work += work;
  }

  read(now: number): PoolRate {
    this.#decay(now);
    return {
      requestsPerSecond: (this.#count * Math.LN2 * 1000) / RATE_HALF_LIFE_MS,
      meanPrefillWork: this.#count > 0 ? this.#work / this.#count : 0,
    };
  }

  #decay(now: number): void {
    if (this.#at !== null && now > this.#at) {
      const f = 2 ** (-(now - this.#at) / RATE_HALF_LIFE_MS);
      this.#count *= f;
      this.#work *= f;
    }
    this.#at = Math.max(now, this.#at ?? now);
  }
}

/** Two rates as one: the sum of rates, the mean work weighted by rate. */
export function addRates(a: PoolRate, b: PoolRate): PoolRate {
  const requestsPerSecond = a.requestsPerSecond + b.requestsPerSecond;
  const work = a.requestsPerSecond * a.meanPrefillWork + b.requestsPerSecond * b.meanPrefillWork;
  return {
    requestsPerSecond,
    meanPrefillWork: requestsPerSecond > 0 ? work / requestsPerSecond : 0,
  };
}
