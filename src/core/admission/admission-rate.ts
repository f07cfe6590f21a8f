/**
 * Admissions per ms over the last `windowMs` or so, exponentially decayed: each event counts
 * e^(-age / window). The sum is divided by the window the events could have filled so far
 * (window x (1 - e^(-elapsed / window)), at least 1 s), so a young estimator is not biased low
 * (the correction Adam's moment estimates make). Not edge/decayed-rate.ts, which has no such
 * correction: admission divides by this rate to predict a wait, and a rate read low for its
 * first seconds would shed every newcomer as one that waits too long. O(1) per event; the
 * clock is the caller's.
 */
const MIN_SPAN_MS = 1000;

export class AdmissionRate {
  readonly windowMs: number;
  #sum = 0;
  #at = Number.NaN;
  #start = Number.NaN;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  add(now: number): void {
    if (Number.isNaN(this.#start)) this.#start = now;
    this.#sum = this.#decayed(now) + 1;
    this.#at = now;
  }

  /** Events per ms; 0 before the first. */
  perMs(now: number): number {
    if (Number.isNaN(this.#start)) return 0;
    const span = this.windowMs * (1 - Math.exp(-(now - this.#start) / this.windowMs));
    return this.#decayed(now) / Math.max(MIN_SPAN_MS, span);
  }

  #decayed(now: number): number {
    if (Number.isNaN(this.#at)) return 0;
    return this.#sum * Math.exp(-Math.max(0, now - this.#at) / this.windowMs);
  }
}
