/**
 * @module
 * What an object that takes an engine's webhooks (the pool's object; an edge pool's root) keeps
 * of them, and the one way it applies a batch: a `BatchLedger` decides whether each is applied
 * (not a replay, not older than the origin's last, not made ahead of the clock), and the
 * engines' facts (health, KV capacity) live in an `EngineFactBook`. A batch that changes state
 * (its facts, or the index: a cache reset, kv events) leaves its mark in storage before the
 * answer goes out, so a restart does not reopen replays of it; other batches are not written
 * (the reporter sends load, and restates health and capacity, every interval: a write a second
 * per origin), and a replay of one changes nothing the engine's next report does not overwrite.
 */

import { BatchLedger } from "../../core/batch-ledger.ts";
import type { EngineEvent, EngineEventBatch } from "../../core/engine-events.ts";
import { changesIndex } from "../../core/engine-facts.ts";
import { EngineFactBook } from "./engine-fact-book.ts";
import type { IngestOutcome } from "./rpc-types.ts";
import type { SnapshotStore } from "./snapshot-store.ts";

/** Gives `origin`'s events to the router or root; false when it does not know the origin. */
export type ApplyEvents = (origin: string, events: EngineEvent[]) => boolean;

export class WebhookBook {
  readonly #batches = new BatchLedger();
  readonly #facts = new EngineFactBook();

  /** At start: the stored marks still within the window, and the engines' facts. */
  load(store: SnapshotStore, now: number): void {
    this.#batches.restore(store.loadMarks(now - this.#batches.windowMs), now);
    this.#facts.load(store);
  }

  /** State every kept fact again to a router or root just built (EngineFactBook.replay). */
  replay(store: SnapshotStore, apply: ApplyEvents): void {
    this.#facts.replay(store, apply);
  }

  /** Forget the facts of origins no longer in settings. */
  retain(store: SnapshotStore, origins: readonly string[]): void {
    this.#facts.retain(store, origins);
  }

  /**
   * One origin's batch, applied through `apply` unless refused; `recorded` runs once it is
   * applied and recorded, before its mark is written. `stored`: the batch left a mark.
   */
  ingest(
    ready: () => SnapshotStore,
    batch: EngineEventBatch,
    apply: ApplyEvents,
    now: number,
    recorded: () => void = () => {},
  ): { readonly outcome: IngestOutcome; readonly stored: boolean } {
    const { origin, id, at, events } = batch;
    const verdict = this.#batches.check(origin, id, at, now);
    if (verdict === "stale") {
      return { outcome: { verdict, lastAt: this.#batches.lastAt(origin) }, stored: false };
    }
    if (verdict !== "apply") return { outcome: { verdict }, stored: false };
    if (!apply(origin, events)) return { outcome: { verdict: "unknown-origin" }, stored: false };
    this.#batches.record(origin, id, at, now);
    recorded();
    // Load and restated facts change nothing stored; saving for them would write every second.
    const store = ready();
    const stored = this.#facts.note(store, origin, events) || changesIndex(events);
    if (stored) store.saveMark(origin, { id, at });
    return { outcome: { verdict: "applied" }, stored };
  }
}
