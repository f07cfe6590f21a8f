/**
 * How well the router's picture of each origin's queue matches the engine: at every report tick,
 * the router's fluid estimate of queued prefill tokens (`stats().origins[i].queuedPrefillTokens`,
 * what `cost` and `dynamo` with active prefill weigh) against the engine's actual prefill
 * backlog. Averaged over ticks and origins.
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
