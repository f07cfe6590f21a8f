/**
 * One origin's circuit breaker: closed until `failureThreshold` consecutive failures, then open
 * (no traffic) for `cooldownMs`, then half-open: exactly one probe request goes through; its
 * success closes the circuit, its failure opens it again. SGLang's gateway does the same
 * (failure 10 / success 3 / 60 s); we close on the first success because a probe is a real
 * request that succeeded. Time is the caller's clock, never the wall clock.
 */
export type CircuitState = "closed" | "open" | "half-open";

export interface CircuitOptions {
  failureThreshold: number;
  cooldownMs: number;
}

export class CircuitBreaker {
  #failures = 0;
  #open = false;
  #openedAt = 0;
  #probing = false;

  state(now: number, options: CircuitOptions): CircuitState {
    if (!this.#open) return "closed";
    return now - this.#openedAt >= options.cooldownMs ? "half-open" : "open";
  }

  /** Whether a new request may be sent now. */
  allows(now: number, options: CircuitOptions): boolean {
    const state = this.state(now, options);
    return state === "closed" || (state === "half-open" && !this.#probing);
  }

  /** A request was sent; in half-open state it is the one probe. */
  onSend(now: number, options: CircuitOptions): void {
    if (this.state(now, options) === "half-open") this.#probing = true;
  }

  onSuccess(): void {
    this.#failures = 0;
    this.#open = false;
    this.#probing = false;
  }

  onFailure(now: number, options: CircuitOptions): void {
    this.#failures++;
    const state = this.state(now, options);
    if (
      state === "half-open" ||
      (state === "closed" && this.#failures >= options.failureThreshold)
    ) {
      this.#open = true;
      this.#openedAt = now;
      this.#probing = false;
    }
  }

  /**
   * A request that ended without proving anything (its lease expired, the client left, it was
   * cancelled): if it was the half-open probe, the next request may probe instead, so the origin
   * is not blocked forever.
   */
  onAbandon(): void {
    this.#probing = false;
  }

  get consecutiveFailures(): number {
    return this.#failures;
  }
}
