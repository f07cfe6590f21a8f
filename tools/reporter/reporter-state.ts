/**
 * What to tell the router after each look at the engine. Pure: observations in, events out.
 *
 * - every good scrape: the engine's state, `health: up` and its capacity (when it reports one),
 *   then its load;
 * - restart (the engine's life counter went backwards, or it was down and came back): a
 *   cache-reset first, because a restarted engine has an empty prefix cache; one failed scrape
 *   alone is not a restart (a counter going backwards will tell if it was);
 * - `health: down` after `downAfter` failed checks in a row, and again at every failed check
 *   after that, until a good scrape.
 *
 * Health and capacity are stated in every batch, not only when they change: a router that
 * forgot them (a pool object that restarted before it stored them, a new object, lost storage)
 * learns them again within one interval, where a change-only reporter would never say `down`
 * again (issue 24). The router writes them only when they change (core/engine-facts.ts), so
 * stating them costs a few bytes per batch.
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
      if (this.#failures < this.downAfter) return [];
      this.#down = true;
      return [{ type: "health", status: "down" }];
    }
    const { sample } = observation;
    const events: EngineEvent[] = [];
    const restarted =
      this.#down ||
      (this.#life !== null && sample.lifeCounter !== null && sample.lifeCounter < this.#life);
    if (restarted) events.push({ type: "cache-reset" });
    events.push({ type: "health", status: "up" });
    this.#capacity = sample.kvCapacityTokens ?? this.#capacity;
    if (this.#capacity !== null) {
      events.push({ type: "capacity", kvCapacityTokens: this.#capacity });
    }
    events.push({
      type: "load",
      running: sample.running,
      waiting: sample.waiting,
      kvUsage: sample.kvUsage,
    });
    this.#life = sample.lifeCounter;
    this.#failures = 0;
    this.#down = false;
    return events;
  }
}
