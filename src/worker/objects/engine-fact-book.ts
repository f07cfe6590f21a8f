/**
 * Each origin's engine facts (its reported health and KV capacity: core/engine-facts.ts) as a
 * Durable Object keeps them across restarts: read from its `SnapshotStore` at start, stated
 * again to the router (or an edge pool's root) it builds, and written back whenever an applied
 * batch changes them (rarely: the reporter states them in every batch, but they seldom change).
 * Shared by the pool's object and the edge root, which both take webhooks.
 */
import type { EngineEvent } from "../../core/engine-events.ts";
import {
  type EngineFacts,
  factEvents,
  NO_FACTS,
  sameFacts,
  withEvents,
} from "../../core/engine-facts.ts";
import type { SnapshotStore } from "./snapshot-store.ts";

export class EngineFactBook {
  readonly #facts = new Map<string, EngineFacts>();

  /** Start from what `store` holds (replaces what this book held). */
  load(store: SnapshotStore): void {
    this.#facts.clear();
    for (const [origin, facts] of store.loadFacts()) this.#facts.set(origin, facts);
  }

  /**
   * State every kept fact again through `apply` (to a router or root just built); facts of an
   * origin it does not know (`apply` answers false: gone from settings) are forgotten.
   */
  replay(store: SnapshotStore, apply: (origin: string, events: EngineEvent[]) => boolean) {
    for (const [origin, facts] of this.#facts) {
      if (apply(origin, factEvents(facts))) continue;
      this.#facts.delete(origin);
      store.deleteFacts(origin);
    }
  }

  /** An applied batch of `origin`: true if it changed the origin's facts (then stored). */
  note(store: SnapshotStore, origin: string, events: readonly EngineEvent[]): boolean {
    const before = this.#facts.get(origin) ?? NO_FACTS;
    const after = withEvents(before, events);
    if (sameFacts(before, after)) return false;
    this.#facts.set(origin, after);
    store.saveFacts(origin, after);
    return true;
  }

  /** Forget the facts of origins no longer in settings. */
  retain(store: SnapshotStore, origins: readonly string[]): void {
    const kept = new Set(origins);
    for (const origin of this.#facts.keys()) {
      if (kept.has(origin)) continue;
      this.#facts.delete(origin);
      store.deleteFacts(origin);
    }
  }
}
