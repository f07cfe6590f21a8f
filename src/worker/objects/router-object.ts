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
 * - Persistence and leases: a snapshot written by an alarm after changes, which also sweeps
 *   expired leases (snapshot-alarm.ts, shared with the coordinators).
 * - Metrics: the reports the Worker sends with `complete` go to a `PoolMetrics` (counters,
 *   latency histograms, the recent time series), so `/metrics` sees every isolate's requests.
 *   They live in memory only: a restart starts them at zero, as Prometheus counters may.
 * - Admission (pools with `admission` settings; src/core/admission): `admit` offers a request
 *   to the pool's `Admission` over its router. Routed or shed at once, the RPC answers at once;
 *   held, its RPC stays open until the request leaves the queue (routed then, on the load of
 *   that moment) or is shed, and `leave` frees the place of a client that went. Whatever may
 *   free room (a completion, a cancel, a reroute, an engine report, settings) pumps the queue,
 *   and one timer wakes it when the estimate drains or the oldest request's time is up.
 * - Webhook batches: applied once each, in order, with their marks and the engines' facts
 *   kept in storage (webhook-book.ts, shared with the edge root); the facts are stated again
 *   to the router at start, so a restart does not bring a `down` or `draining` origin back `up`.
 * - Stored responses (OpenAI Responses; stored-response-book.ts): which origin stored each
 *   response id, written through to storage; `routeStored` pins a follow-up there
 *   (core/responses/stored-route.ts). Edge pools keep theirs here too (the RPCs that take
 *   the pool's limits need no router), so a follow-up finds its origin from any isolate.
 */
import { DurableObject } from "cloudflare:workers";
import { Admission, type Settled } from "../../core/admission/admission.ts";
import type { EngineEventBatch } from "../../core/engine-events.ts";
import type { StoredResponse } from "../../core/responses/stored-responses.ts";
import { type StoredRoute, storedRoute } from "../../core/responses/stored-route.ts";
import { CoreRouter } from "../../core/router/core-router.ts";
import type { FailureKind, RouteDecision } from "../../core/router/router-types.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import type { StoredResponseSettings } from "../../core/settings/stored-response-settings.ts";
import { PoolMetrics } from "../pool-metrics/pool-metrics.ts";
import { type RequestReport, routerOutcome } from "../request-record/request-report.ts";
import { needsSettings, type PoolVersion } from "../settings/pool-version.ts";
import { ObjectStart } from "./object-start.ts";
import type {
  AdmitCall,
  Admitted,
  IngestOutcome,
  ObjectState,
  RouteCall,
  StoredRouteCall,
} from "./rpc-types.ts";
import { restoreSnapshot, SnapshotAlarm } from "./snapshot-alarm.ts";
import type { SnapshotStore, StoredPool } from "./snapshot-store.ts";
import { parseStoredPool } from "./stored-pool.ts";
import { StoredResponseBook } from "./stored-response-book.ts";
import { WebhookBook } from "./webhook-book.ts";

export class RouterObject extends DurableObject<Env> {
  /** Makes tickets of this start unique against those of earlier starts. */
  readonly #ticketPrefix = `${crypto.randomUUID().slice(0, 8)}-`;
  readonly #boot: ObjectStart;
  #router: CoreRouter | null = null;
  #held: StoredPool | null = null;
  readonly #metrics = new PoolMetrics(Date.now());
  readonly #webhooks = new WebhookBook();
  readonly #persist: SnapshotAlarm;
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
    this.#persist = new SnapshotAlarm(ctx);
    this.#boot = new ObjectStart(
      ctx,
      (store) => {
        const now = Date.now();
        this.#webhooks.load(store, now);
        const stored = parseStoredPool(store.loadPool());
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
    restoreSnapshot(store, router, `router ${stored.model}`);
    const now = Date.now();
    this.#webhooks.replay(store, (origin, events) => router.ingest(origin, events, now));
    this.#router = router;
    this.#held = stored;
    this.#admission = new Admission(router, stored.pool.admission, (id, s) =>
      this.#settled.push([id, s]),
    );
  }

  #touch(): void {
    this.#persist.touch();
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

  /** How many stored-response ids the pool holds (`/admin/state`, both coordination modes). */
  storedResponseCount(limits: StoredResponseSettings): number {
    return this.#storedResponses().count(limits, Date.now());
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
    const now = Date.now();
    const { outcome, stored } = this.#webhooks.ingest(
      () => this.#ready(),
      batch,
      (origin, events) => router.ingest(origin, events, now),
      now,
      () => this.#pump(),
    );
    if (stored) this.#touch();
    return outcome;
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
    this.#webhooks.retain(
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
    const router = this.#router;
    this.#persist.run(
      () => this.#ready(),
      router && {
        snapshot: () => router.snapshot(),
        // Stored response ids past their time go with the expired leases.
        leases: {
          expire: (now: number) => {
            router.expire(now);
            this.#responses?.sweep(now);
          },
          get outstanding() {
            return router.outstanding;
          },
        },
      },
    );
  }
}
