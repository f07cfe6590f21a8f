/**
 * What to tell the router after each look at the engine. Pure: observations in, events out.
 *
 * - every good scrape: the engine's state, `health: up` and its capacity (when it reports one),
 *   then its load;
 * - restart (the engine's life counter went backwards, or it was down and came back): a
 *   cache-reset first, because a restarted engine has an empty prefix cache; one failed scrape
 *   alone is not a restart (a counter going backwards will tell if it was);
 * - `health: down` after `downAfter` failed checks in a row, and again at every failed check
 *   after that, until a good scrape; an engine whose /health answers but whose /metrics does
 *   not is busy, not failing;
 * - prefill-rate (engines exporting prefill counters: llama.cpp): the prompt tokens prefilled
 *   since the last rate over the seconds they took, once those seconds reach
 *   `MIN_PREFILL_SECONDS` (the engine prints its seconds to a millisecond: a shorter span is
 *   mostly rounding). A restart, or either counter going backwards, starts the span afresh.
 *
 * Health and capacity are stated in every batch, not only when they change: a router that
 * forgot them (a pool object that restarted before it stored them, a new object, lost storage)
 * learns them again within one interval, where a change-only reporter would never say `down`
 * again (issue 24). The router writes them only when they change (core/engine-facts.ts), so
 * stating them costs a few bytes per batch.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";
import type { EngineSample, PrefillCounters } from "./engine-metrics.ts";

/** Prefill seconds a measured rate spans at least. */
export const MIN_PREFILL_SECONDS = 0.1;
/** The webhook's bound on a rate (engine-events.ts). */
const MAX_RATE = 1e9;

/** A scrape, or none: `alive` when /health answered but /metrics did not (the engine is busy). */
export type Observation = { ok: true; sample: EngineSample } | { ok: false; alive?: boolean };

export class ReporterState {
  #capacity: number | null = null;
  #life: number | null = null;
  /** The counters at the start of the current prefill span. */
  #prefillFrom: PrefillCounters | null = null;
  #failures = 0;
  #down = false;
  readonly downAfter: number;

  constructor(downAfter = 3) {
    this.downAfter = downAfter;
  }

  observe(observation: Observation): EngineEvent[] {
    if (!observation.ok && observation.alive) {
      // Healthy but too busy to be scraped: nothing to report, and no step towards down.
      if (!this.#down) this.#failures = 0;
      return [];
    }
    if (!observation.ok) {
      this.#failures++;
      if (this.#failures < this.downAfter) return [];
      this.#down = true;
      return [{ type: "health", status: "down" }];
    }
    const { sample } = observation;
    const events: EngineEvent[] = [];
    const from = this.#prefillFrom;
    const prefill = sample.prefill;
    const countersFell =
      from !== null &&
      prefill !== null &&
      (prefill.tokens < from.tokens || prefill.seconds < from.seconds);
    const restarted =
      this.#down ||
      countersFell ||
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
    if (restarted || from === null || prefill === null) {
      this.#prefillFrom = prefill;
    } else {
      const tokens = Math.round(prefill.tokens - from.tokens);
      const seconds = prefill.seconds - from.seconds;
      if (seconds >= MIN_PREFILL_SECONDS && tokens >= 1) {
        events.push({
          type: "prefill-rate",
          tokensPerSecond: Math.min(MAX_RATE, tokens / seconds),
          tokens,
        });
        this.#prefillFrom = prefill;
      }
    }
    this.#life = sample.lifeCounter;
    this.#failures = 0;
    this.#down = false;
    return events;
  }
}
