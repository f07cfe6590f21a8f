/**
 * @module
 * How an object that holds a router (the pool's object, a coordinator) keeps its index across
 * restarts. A change marks it dirty and sets an alarm; the alarm writes one snapshot for all
 * changes since (at most one per PERSIST_DELAY_MS, so the hot path never serialises the index),
 * expires leases whose completion never came, and keeps sweeping while any are outstanding, so
 * `/admin/state` shows the true load of an idle pool. Losing the last seconds of learning on
 * eviction costs a few cache misses, never a wrong answer. At start the stored snapshot is
 * restored; an unreadable one is discarded: the index is a cache of beliefs, and starting empty
 * beats refusing every request.
 */
import type { SnapshotStore } from "./snapshot-store.ts";

/** Delay between the first unsaved change and the snapshot that saves it. */
export const PERSIST_DELAY_MS = 10_000;
/** Interval of the lease sweep while requests are outstanding and nothing else changes. */
export const LEASE_SWEEP_MS = 60_000;

/** What the alarm saves and sweeps: the object's snapshot and the router holding its leases. */
export interface Persisted {
  snapshot(): Uint8Array;
  readonly leases: { expire(now: number): unknown; readonly outstanding: number };
}

export class SnapshotAlarm {
  readonly #ctx: DurableObjectState;
  #dirty = false;
  #alarmSet = false;

  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  /** Something the snapshot holds changed: it is written within PERSIST_DELAY_MS. */
  touch(): void {
    this.#dirty = true;
    this.#schedule(PERSIST_DELAY_MS);
  }

  /**
   * The object's `alarm`: `ready` gives its store (it throws while the object failed to
   * start); `held` is what it persists, null before it has settings.
   */
  run(ready: () => SnapshotStore, held: Persisted | null): void {
    this.#alarmSet = false;
    const store = ready();
    if (!held) return;
    const now = Date.now();
    held.leases.expire(now);
    if (this.#dirty) {
      store.saveSnapshot(held.snapshot());
      this.#dirty = false;
    }
    if (held.leases.outstanding > 0) this.#schedule(LEASE_SWEEP_MS);
  }

  #schedule(delayMs: number): void {
    if (this.#alarmSet) return;
    this.#alarmSet = true;
    void this.#ctx.storage.setAlarm(Date.now() + delayMs);
  }
}

/** Bring back `store`'s snapshot into `target`; an unreadable one is deleted (`what` logs it). */
export function restoreSnapshot(
  store: SnapshotStore,
  target: { restore(bytes: Uint8Array): void },
  what: string,
): void {
  const bytes = store.loadSnapshot();
  if (!bytes) return;
  try {
    target.restore(bytes);
  } catch (error) {
    console.warn(`${what}: discarding unreadable snapshot: ${String(error)}`);
    store.clearSnapshot();
  }
}
