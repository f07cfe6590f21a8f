/**
 * Which engine-event batches a pool has applied, so that a replayed, retried or late batch is
 * not applied again. Pure: the caller passes `now` (ms). The pool's Durable Object holds one
 * beside its `CoreRouter` and asks `check` before `CoreRouter.ingest`, then `record`s the batch;
 * an edge pool's root object holds one before `EdgeRoot.ingest`. It sits beside engine-events.ts,
 * which defines the batches it records, because both coordination modes use it.
 *
 * Rules, per origin, in this order:
 * 1. window: a batch made (`at`) more than `windowMs` before now is stale. The signature has
 *    the same window, so an older batch cannot be presented anyway; this rule is what lets the
 *    ledger forget everything older.
 * 2. ahead: a batch made more than `aheadMs` after now (by the router's clock) is refused. Rule
 *    4 orders batches by `at`, so an applied batch made ahead holds off the origin's later
 *    batches until the router's clock passes it: one signed batch with `at` = now + 45 s, or a
 *    reporter whose clock ran fast and was set back, used to lock the origin's reports out for
 *    45 s and let its load fade (issue 24). Bounded at 5 s, a batch made ahead holds off at
 *    most 5 s of reports, and a reporter whose clock runs further ahead is told so (a 400
 *    naming `at`) instead of being applied and locking itself out later.
 * 3. duplicate: a batch whose id this ledger applied is a duplicate (answered as a success).
 * 4. ordering: a batch not made later than the origin's last applied batch is stale.
 *
 * Why not order by the router's own receive time, which no sender can set? Replays: ordering by
 * `at`, a property of the signed batch, refuses a replay of any batch older than the last
 * applied one even once its id is forgotten (past the id bound, or after a restart, which keeps
 * only the last mark); a receive time is always "now", so a replay would always look newest.
 *
 * Ordering is per origin across all event kinds, not per kind. A batch is one look at the engine
 * (a reset, then up, then its load): an older look must not be mixed into a newer one. And only
 * per origin does ordering hold off replays on its own: the reporter sends load every interval,
 * so a captured batch is older than the last applied one within an interval, whereas per kind a
 * captured `cache-reset` or `health: down` would stay the newest of its kind until the engine
 * next restarts. The cost: a late batch's events of kinds the newer batch lacked are dropped;
 * the reporter keeps the state-changing events of any batch it could not deliver and sends them
 * in its next batch, which is newer.
 *
 * So ordering alone refuses every replay; ids choose the answer. A reporter that lost the
 * response to a batch it sent resends it, and must be told it was applied (a refusal would make
 * it send the batch's events again). Memory is bounded twice: ids are kept only for batches made
 * within the window, at most `maxIdsPerOrigin` per origin (the oldest goes first: that batch is
 * then answered stale, and still never applied, by rule 4); and an origin whose last batch left
 * the window is forgotten whole (rule 1 refuses anything it could be sent). Only a holder of the
 * webhook secret can add ids, so nobody else can push ids out.
 */
import { BATCH_AHEAD_MS, BATCH_WINDOW_MS } from "./engine-events.ts";

export type BatchVerdict = "apply" | "duplicate" | "stale" | "ahead";

/** An applied batch: what the Durable Object persists per origin. */
export interface BatchMark {
  readonly id: string;
  readonly at: number;
}

export interface BatchLedgerOptions {
  /** How long before now a batch may have been made (ms); the signature's window. */
  windowMs?: number;
  /** How far after now (ms) a batch may say it was made: clock skew, and no more. */
  aheadMs?: number;
  /**
   * Ids kept per origin: 512 covers the whole window at one batch per 600 ms (the reporter's
   * default is one a second), about 60 KB per origin at the bound.
   */
  maxIdsPerOrigin?: number;
}

interface OriginLedger {
  last: BatchMark;
  /** id -> at of applied batches, in the order applied (so by increasing `at`). */
  readonly ids: Map<string, number>;
}

export class BatchLedger {
  readonly windowMs: number;
  readonly aheadMs: number;
  readonly maxIdsPerOrigin: number;
  readonly #origins = new Map<string, OriginLedger>();
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor({
    windowMs = BATCH_WINDOW_MS,
    aheadMs = BATCH_AHEAD_MS,
    maxIdsPerOrigin = 512,
  }: BatchLedgerOptions = {}) {
    if (!(windowMs > 0)) throw new RangeError(`windowMs must be > 0, not ${windowMs}`);
    if (!(aheadMs >= 0 && aheadMs <= windowMs)) {
      throw new RangeError(`aheadMs must be in [0, windowMs], not ${aheadMs}`);
    }
    if (!(Number.isInteger(maxIdsPerOrigin) && maxIdsPerOrigin >= 1)) {
      throw new RangeError(`maxIdsPerOrigin must be an integer >= 1, not ${maxIdsPerOrigin}`);
    }
    this.windowMs = windowMs;
    this.aheadMs = aheadMs;
    this.maxIdsPerOrigin = maxIdsPerOrigin;
  }

  /** Whether the batch `id` of `origin`, made at `at`, is to be applied now. */
  check(origin: string, id: string, at: number, now: number): BatchVerdict {
    if (now - at > this.windowMs) return "stale";
    if (at - now > this.aheadMs) return "ahead";
    const ledger = this.#origins.get(origin);
    if (!ledger) return "apply";
    if (ledger.ids.has(id)) return "duplicate";
    return at > ledger.last.at ? "apply" : "stale";
  }

  /**
   * When the origin's last applied batch was made (its `at`), if this ledger holds the origin:
   * what a sender refused as stale needs to make its next batch later (a reporter restarted
   * with its clock set back would otherwise be refused until its clock passed it).
   */
  lastAt(origin: string): number | null {
    return this.#origins.get(origin)?.last.at ?? null;
  }

  /** The batch was applied. Throws if `check` would not have said "apply" (misuse). */
  record(origin: string, id: string, at: number, now: number): void {
    const verdict = this.check(origin, id, at, now);
    if (verdict !== "apply") throw new Error(`record: batch ${id} of ${origin} is ${verdict}`);
    this.#sweep(now);
    const ledger = this.#origins.get(origin);
    if (!ledger) {
      this.#origins.set(origin, { last: { id, at }, ids: new Map([[id, at]]) });
      return;
    }
    ledger.last = { id, at };
    ledger.ids.set(id, at);
    for (const [oldId, oldAt] of ledger.ids) {
      if (ledger.ids.size <= this.maxIdsPerOrigin && now - oldAt <= this.windowMs) break;
      ledger.ids.delete(oldId);
    }
  }

  /**
   * Start again from persisted marks (an object restart): each origin's last applied batch is
   * remembered, its id too; marks already out of the window are dropped. Replaces all state.
   */
  restore(marks: Iterable<readonly [string, BatchMark]>, now: number): void {
    this.#origins.clear();
    for (const [origin, { id, at }] of marks) {
      if (now - at > this.windowMs) continue;
      this.#origins.set(origin, { last: { id, at }, ids: new Map([[id, at]]) });
    }
  }

  /** Origins and ids held (the memory bound, for tests and the state page). */
  get size(): { origins: number; ids: number } {
    let ids = 0;
    for (const ledger of this.#origins.values()) ids += ledger.ids.size;
    return { origins: this.#origins.size, ids };
  }

  /** Forget origins whose last batch left the window; at most once per window. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < this.windowMs) return;
    this.#sweptAt = now;
    for (const [origin, ledger] of this.#origins) {
      if (now - ledger.last.at > this.windowMs) this.#origins.delete(origin);
    }
  }
}
