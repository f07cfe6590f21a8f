/**
 * What to tell the router after each look at the engine. Pure: observations in, events out.
 *
 * - every good scrape: a load event;
 * - capacity: on the first scrape and whenever it changes;
 * - restart (the engine's life counter went backwards, or it was down and came back): a
 *   cache-reset, because a restarted engine has an empty prefix cache; one failed scrape alone
 *   is not a restart (a counter going backwards will tell if it was);
 * - health: down after `downAfter` failed checks in a row, up again on the next good scrape.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";
import type { EngineSample } from "./engine-metrics.ts";

export type Observation = { ok: true; sample: EngineSample } | { ok: false };

export class ReporterState {
  #capacity: number | null = null;
  #life: number | null = null;
  #failures = 0;
  #down = false;
  readonly downAfter: number;

  constructor(downAfter = 3) {
    this.downAfter = downAfter;
  }

  observe(observation: Observation): EngineEvent[] {
    if (!observation.ok) {
      this.#failures++;
      if (!this.#down && this.#failures >= this.downAfter) {
        this.#down = true;
        return [{ type: "health", status: "down" }];
      }
      return [];
    }
    const { sample } = observation;
    const events: EngineEvent[] = [];
    const restarted =
      this.#down ||
      (this.#life !== null && sample.lifeCounter !== null && sample.lifeCounter < this.#life);
    if (restarted) events.push({ type: "cache-reset" });
    if (this.#down) events.push({ type: "health", status: "up" });
    if (sample.kvCapacityTokens !== null && sample.kvCapacityTokens !== this.#capacity) {
      events.push({ type: "capacity", kvCapacityTokens: sample.kvCapacityTokens });
    }
    events.push({
      type: "load",
      running: sample.running,
      waiting: sample.waiting,
      kvUsage: sample.kvUsage,
    });
    this.#capacity = sample.kvCapacityTokens ?? this.#capacity;
    this.#life = sample.lifeCounter;
    this.#failures = 0;
    this.#down = false;
    return events;
  }
}
