/**
 * The pool's Durable Object: one per model (`idFromName(model)`), holding the pool's one
 * `CoreRouter` in memory. It has no routing logic of its own and no HTTP: each RPC method is a
 * thin call into the core with the object's clock, plus the bookkeeping only an object can do:
 *
 * - Start-up: the stored settings and snapshot are restored under `blockConcurrencyWhile`, so
 *   no call sees a half-built router. A storage failure is kept and re-thrown to the next call
 *   (which starts a retry) rather than thrown inside, which would reset the object in a loop.
 *   An unreadable snapshot is discarded: the index is a cache of beliefs, and starting empty
 *   beats refusing every request.
 * - Persistence: changes mark the router dirty and schedule an alarm; the alarm writes one
 *   snapshot for all changes since (at most one per PERSIST_DELAY_MS, so the hot path never
 *   serialises the index). Losing the last few seconds of learning on eviction costs a few
 *   cache misses, never a wrong answer.
 * - Leases: the alarm also expires leases whose completion never came, and keeps sweeping
 *   while any are outstanding, so `/admin/state` shows the true load of an idle pool.
 * - Metrics: the reports the Worker sends with `complete` go to a `PoolMetrics` (counters,
 *   latency histograms, the recent time series), so `/metrics` sees every isolate's requests.
 *   They live in memory only: a restart starts them at zero, as Prometheus counters may.
 * - Admission (pools with `admission` settings; src/core/admission): `admit` offers a request
 *   to the pool's `Admission` over its router. Routed or shed at once, the RPC answers at once;
 *   held, its RPC stays open until the request leaves the queue (routed then, on the load of
 *   that moment) or is shed, and `leave` frees the place of a client that went. Whatever may
 *   free room (a completion, a cancel, a reroute, an engine report, settings) pumps the queue,
 *   and one timer wakes it when the estimate drains or the oldest request's time is up.
 * - Webhook batches: a `BatchLedger` decides whether each is applied (not a replay, not older
 *   than the origin's last, not made ahead of the clock). Engine facts (health, KV capacity)
 *   live in an `EngineFactBook`, written when a batch changes them and stated again to the
 *   router at start, so a restart does not bring a `down` or `draining` origin back `up`. A
 *   batch that changes state (its facts, or the index: a cache reset, kv events) leaves its
 *   mark in storage before the answer goes out, so a restart does not reopen replays of it;
 *   other batches are not written (the reporter sends load, and restates health and capacity,
 *   every interval: a write a second per origin), and a replay of one changes nothing that the
 *   engine's next report does not overwrite within an interval.
 * - Stored responses (OpenAI Responses; stored-response-book.ts): which origin stored each
 *   response id, written through to storage; `routeStored` pins a follow-up there
 *   (core/responses/stored-route.ts). Edge pools keep theirs here too (the RPCs that take
 *   the pool's limits need no router), so a follow-up finds its origin from any isolate.
 */
import { DurableObject } from "cloudflare:workers";
import { Admission, type Settled } from "../../core/admission/admission.ts";
import { BatchLedger } from "../../core/batch-ledger.ts";
import type { EngineEventBatch } from "../../core/engine-events.ts";
import { changesIndex } from "../../core/engine-facts.ts";
import type { StoredResponse } from "../../core/responses/stored-responses.ts";
import { type StoredRoute, storedRoute } from "../../core/responses/stored-route.ts";
import { CoreRouter } from "../../core/router/core-router.ts";
import type { FailureKind, RouteDecision } from "../../core/router/router-types.ts";
import { type PoolSettings, poolSettings } from "../../core/settings/settings-schema.ts";
import type { StoredResponseSettings } from "../../core/settings/stored-response-settings.ts";
import { PoolMetrics } from "../pool-metrics/pool-metrics.ts";
import { type RequestReport, routerOutcome } from "../request-record/request-report.ts";
import { needsSettings, type PoolVersion } from "../settings/pool-version.ts";
import { EngineFactBook } from "./engine-fact-book.ts";
import { ObjectStart } from "./object-start.ts";
import type {
  AdmitCall,
  Admitted,
  IngestOutcome,
  ObjectState,
  RouteCall,
  StoredRouteCall,
} from "./rpc-types.ts";
import type { SnapshotStore, StoredPool } from "./snapshot-store.ts";
import { StoredResponseBook } from "./stored-response-book.ts";

/** Delay between the first unsaved change and the snapshot that saves it. */
const PERSIST_DELAY_MS = 10_000;
/** Interval of the lease sweep while requests are outstanding and nothing else changes. */
const LEASE_SWEEP_MS = 60_000;

export class RouterObject extends DurableObject<Env> {
  /** Makes tickets of this start unique against those of earlier starts. */
  readonly #ticketPrefix = `${crypto.randomUUID().slice(0, 8)}-`;
  readonly #boot: ObjectStart;
  #router: CoreRouter | null = null;
  #held: StoredPool | null = null;
  readonly #metrics = new PoolMetrics(Date.now());
  readonly #batches = new BatchLedger();
  readonly #facts = new EngineFactBook();
  #dirty = false;
  #alarmSet = false;
  #admission: Admission | null = null;
  /** Held requests' answers, by id; and what admission settled while it ran. */
  readonly #holding = new Map<string, (answer: Admitted) => void>();
  readonly #settled: [string, Settled][] = [];
  #wake: ReturnType<typeof setTimeout> | undefined;
  #responses: StoredResponseBook | null = null;
  /** Tickets of pinned follow-ups: `-` is no base-36 digit, so none is the router's. */
  #pinned = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#boot = new ObjectStart(
      ctx,
      (store) => {
        const now = Date.now();
        this.#batches.restore(store.loadMarks(now - this.#batches.windowMs), now);
        this.#facts.load(store);
        const stored = parseStored(store.loadPool());
        if (stored) this.#install(stored, store);
      },
      "router object",
    );
    this.#boot.begin();
  }

  #ready(): SnapshotStore {
    return this.#boot.ready();
  }

  /**
   * Build the router for `stored` and bring back the last snapshot and the engines' facts
   * (before any traffic).
   */
  #install(stored: StoredPool, store: SnapshotStore): void {
    const router = new CoreRouter(stored.pool, {
      model: stored.model,
      ticketPrefix: this.#ticketPrefix,
    });
    const bytes = store.loadSnapshot();
    if (bytes) {
      try {
        router.restore(bytes);
      } catch (error) {
        console.warn(`router ${stored.model}: discarding unreadable snapshot: ${String(error)}`);
        store.clearSnapshot();
      }
    }
    const now = Date.now();
    this.#facts.replay(store, (origin, events) => router.ingest(origin, events, now));
    this.#router = router;
    this.#held = stored;
    this.#admission = new Admission(router, stored.pool.admission, (id, s) =>
      this.#settled.push([id, s]),
    );
  }

  #touch(): void {
    this.#dirty = true;
    this.#schedule(PERSIST_DELAY_MS);
  }

  #schedule(delayMs: number): void {
    if (this.#alarmSet) return;
    this.#alarmSet = true;
    void this.ctx.storage.setAlarm(Date.now() + delayMs);
  }

  /** The router, if it holds settings at least as new as the caller's. */
  #routerFor(version: PoolVersion): CoreRouter | null {
    this.#ready();
    if (!this.#router || needsSettings(this.#held?.version ?? null, version)) return null;
    return this.#router;
  }

  /** A routing decision, or null when the caller must `applySettings` first. */
  route(call: RouteCall): RouteDecision | null {
    const router = this.#routerFor(call.version);
    if (!router) return null;
    const decision = router.route(call, Date.now());
    if (decision.ticket !== null) this.#touch();
    return decision;
  }

  /**
   * A request offered to the pool's admission: answered at once when routed or shed, else when
   * it leaves the queue (or its client leaves: `leave`); null as for `route`.
   */
  admit(call: AdmitCall): Promise<Admitted | null> {
    const router = this.#routerFor(call.version);
    const admission = this.#admission;
    if (!router || !admission) return Promise.resolve(null);
    const { id, version: _, ...request } = call;
    if (this.#holding.has(id)) throw new Error(`request ${id} is already waiting`);
    const now = Date.now();
    const offered = admission.offer(id, request, now);
    if (offered.kind === "routed" && offered.decision.ticket !== null) this.#touch();
    const answer =
      offered.kind === "queued"
        ? new Promise<Admitted>((resolve) => this.#holding.set(id, resolve))
        : Promise.resolve<Admitted>(offered);
    this.#admitted(now);
    return answer;
  }

  /** A held request's client left: its place is free. False if it was not waiting. */
  leave(id: string): boolean {
    this.#ready();
    if (!this.#admission?.leave(id)) return false;
    this.#holding.get(id)?.({ kind: "left" });
    this.#holding.delete(id);
    this.#admitted(Date.now());
    return true;
  }

  /** Hand out what admission settled, and keep one timer for its next wake-up. */
  #admitted(now: number): void {
    for (let next = this.#settled.shift(); next; next = this.#settled.shift()) {
      const [id, settled] = next;
      const resolve = this.#holding.get(id);
      this.#holding.delete(id);
      if (settled.kind === "routed" && settled.decision.ticket !== null) {
        // A request nobody waits for any more (it cannot be: `leave` removes it) holds no lease.
        if (resolve) this.#touch();
        else this.#router?.cancel(settled.decision.ticket, now);
      }
      resolve?.(settled);
    }
    if (this.#wake !== undefined) clearTimeout(this.#wake);
    this.#wake = undefined;
    const at = this.#admission?.wakeAt(now) ?? null;
    if (at !== null) this.#wake = setTimeout(() => this.#pump(), Math.max(0, at - now));
  }

  /** Something may have freed room: admit what the pool now takes. */
  #pump(): void {
    const admission = this.#admission;
    if (!admission || admission.waiting === 0) return;
    const now = Date.now();
    admission.pump(now);
    this.#admitted(now);
  }

  #storedResponses(): StoredResponseBook {
    this.#ready();
    this.#responses ??= new StoredResponseBook(this.ctx.storage);
    return this.#responses;
  }

  /**
   * A follow-up of a stored response: leased to the origin that stored it, or why it cannot be
   * (core/responses/stored-route.ts); null as for `route`. No admission: the request cannot
   * wait for another origin, and the engine's own queue holds it.
   */
  routeStored(call: StoredRouteCall): StoredRoute | null {
    const router = this.#routerFor(call.version);
    const limits = this.#held?.pool.storedResponses;
    if (!router || !limits) return null;
    const { responseId, version: _, ...request } = call;
    const now = Date.now();
    const stored = this.#storedResponses().lookup(responseId, limits, now);
    const ticket = `${this.#ticketPrefix}pin-${(this.#pinned++).toString(36)}`;
    const routed = storedRoute(router, stored, request, ticket, now);
    if (routed.kind === "routed") this.#touch();
    return routed;
  }

  /** `origin` stored response `id` (the Worker saw its id in the answer). */
  rememberResponse(id: string, origin: string, limits: StoredResponseSettings): void {
    this.#storedResponses().remember(id, origin, limits, Date.now());
  }

  /** Where response `id` is stored, or null (edge pools: their replicas route the follow-up). */
  storedResponse(id: string, limits: StoredResponseSettings): StoredResponse | null {
    return this.#storedResponses().lookup(id, limits, Date.now());
  }

  /** Response `id` was deleted at its origin. False if it was not known. */
  forgetResponse(id: string, limits: StoredResponseSettings): boolean {
    return this.#storedResponses().forget(id, limits, Date.now());
  }

  /** The ticket's origin failed before its first byte; `next` is tried instead. */
  reroute(ticket: string, failure: FailureKind, next: string): number | null {
    this.#ready();
    const matched = this.#router?.reroute(ticket, failure, next, Date.now()) ?? null;
    if (matched !== null) this.#touch();
    this.#pump();
    return matched;
  }

  /** The ticket's prefill leg failed (not a 4xx); its decode origin serves it alone. */
  prefillFailed(ticket: string, failure: FailureKind): number | null {
    this.#ready();
    const matched = this.#router?.prefillFailed(ticket, failure, Date.now()) ?? null;
    if (matched !== null) this.#touch();
    return matched;
  }

  /** A decision the Worker will not use (it arrived late, or names an unknown origin). */
  cancel(ticket: string): boolean {
    this.#ready();
    const known = this.#router?.cancel(ticket, Date.now()) ?? false;
    if (known) this.#touch();
    this.#pump();
    return known;
  }

  /**
   * The request ended as `report` says: the router learns its outcome, the metrics count it,
   * with `earlier` reports the isolate could not send before (it routed them alone).
   */
  complete(ticket: string, report: RequestReport, earlier: readonly RequestReport[] = []): boolean {
    this.#ready();
    const now = Date.now();
    const known = this.#router?.complete(ticket, routerOutcome(report), now) ?? false;
    if (known) this.#touch();
    for (const r of [report, ...earlier]) this.#metrics.record(r, now);
    this.#pump();
    return known;
  }

  /** One origin's batch of engine events, unless it is a replay or late; null as for `route`. */
  ingest(batch: EngineEventBatch, version: PoolVersion): IngestOutcome | null {
    const router = this.#routerFor(version);
    if (!router) return null;
    const { origin, id, at, events } = batch;
    const now = Date.now();
    const verdict = this.#batches.check(origin, id, at, now);
    if (verdict === "stale") return { verdict, lastAt: this.#batches.lastAt(origin) };
    if (verdict !== "apply") return { verdict };
    if (!router.ingest(origin, events, now)) return { verdict: "unknown-origin" };
    this.#batches.record(origin, id, at, now);
    this.#pump();
    // Load and restated facts change nothing stored; saving for them would write every second.
    const store = this.#ready();
    if (this.#facts.note(store, origin, events) || changesIndex(events)) {
      store.saveMark(origin, { id, at });
      this.#touch();
    }
    return { verdict: "applied" };
  }

  /** Take the pool's settings, unless the object already holds newer ones. */
  applySettings(model: string, pool: PoolSettings, version: PoolVersion): void {
    const store = this.#ready();
    if (!needsSettings(this.#held?.version ?? null, version)) return;
    const stored = { model, pool, version };
    this.#metrics.retainOrigins(pool.origins.map((o) => o.id));
    if (this.#router) {
      this.#router.applySettings(pool);
      this.#held = stored;
      const now = Date.now();
      this.#admission?.configure(pool.admission, now);
      this.#admitted(now);
    } else {
      this.#install(stored, store);
    }
    this.#facts.retain(
      store,
      pool.origins.map((o) => o.id),
    );
    store.savePool(stored);
    this.#touch();
  }

  state(): ObjectState | null {
    const store = this.#ready();
    if (!this.#router || !this.#held) return null;
    const now = Date.now();
    return {
      model: this.#held.model,
      version: this.#held.version,
      router: this.#router.stats(now),
      metrics: this.#metrics.snapshot(now),
      ...(this.#admission ? { admission: this.#admission.stats(now) } : {}),
      snapshotRows: store.snapshotRows,
    };
  }

  override async alarm(): Promise<void> {
    this.#alarmSet = false;
    const store = this.#ready();
    const router = this.#router;
    if (!router) return;
    const now = Date.now();
    router.expire(now);
    this.#responses?.sweep(now);
    if (this.#dirty) {
      store.saveSnapshot(router.snapshot());
      this.#dirty = false;
    }
    if (router.outstanding > 0) this.#schedule(LEASE_SWEEP_MS);
  }
}

/** Stored settings written by an earlier version may no longer parse: then wait for a push. */
function parseStored(value: unknown): StoredPool | null {
  if (value === null || typeof value !== "object") return null;
  const { model, pool, version } = value as Partial<StoredPool>;
  const parsed = poolSettings.safeParse(pool);
  if (typeof model !== "string" || !parsed.success || !version) return null;
  return { model, pool: parsed.data, version };
}
