/**
 * How well the router's picture of each origin's queue matches the engine: at every sample tick,
 * the router's fluid estimate of queued prefill work (`stats().origins[i].queuedPrefillTokens`,
 * what `cost` weighs) against the engine's actual prefill backlog in the same unit
 * (short-context token equivalents, attention-weighted: `Engine.prefillBacklog`). Averaged over
 * ticks and origins. The engine's backlog falls at each iteration's end, the router's fluid
 * continuously, so the mean absolute error includes up to one iteration's chunk per origin.
 */
import { round } from "../report/stats.ts";

export class QueueProbe {
  #samples = 0;
  #router = 0;
  #engine = 0;
  #error = 0;

  sample(routerTokens: number, engineTokens: number): void {
    this.#samples++;
    this.#router += routerTokens;
    this.#engine += engineTokens;
    this.#error += Math.abs(routerTokens - engineTokens);
  }

  summary(): { routerTokens: number; engineTokens: number; absErrorTokens: number } {
    const n = Math.max(1, this.#samples);
    return {
      routerTokens: round(this.#router / n, 0),
      engineTokens: round(this.#engine / n, 0),
      absErrorTokens: round(this.#error / n, 0),
    };
  }
}
