/**
 * An isolate's replica of its pool (docs/architecture.md, "Scale: two coordination modes"): it
 * routes every request itself, with the core's `CoreRouter` over its own copy of the pool's
 * index, and reports to its coordinator in batches (replica-sync.ts). No coordinator call
 * precedes an origin fetch.
 *
 * - Grain: the replica and its coordinator index every `edge.chunkStride`-th chunk hash
 *   (edge-grain.ts), so applying the pool's claims costs an isolate stride-fold less.
 * - Routing: the pool's policy over this index, with the load of the coordinator's last
 *   vector plus this isolate's records since (load-overlay.ts), ties seeded by the request and
 *   a draw among the best candidates in proportion to what the others probably routed while
 *   the view was stale (stale-pick.ts).
 * - Records and sync (replica-sync.ts): each route, reroute, end and cancel is queued with the
 *   prompt as a path after the chunk the chosen origin was believed to hold (its new chunks
 *   only); the sync module says when to sync, sends the batch and applies the answer's index
 *   records to the router; this module takes the answer's load vector, rate and hot prefixes.
 * - Coordinator restart: its leases went with its old life, so the replica sends the route of
 *   each request still running here again (`again`, replica-sync.ts; issue 23, defect C),
 *   to the origin serving it now; their ends then release them.
 * - Cold or idle: with no view, or one older than `maxStalenessMs` (the isolate idled past
 *   `warmMs`), `syncFirst` says the next request should wait for one sync (the Worker does,
 *   within `routeTimeoutMs`); `nextSyncAt` then says at once.
 * - Announced first (announce.ts): a long prefill's request starts when the sync module says
 *   (`startAt`), once the other isolates can see it.
 * - Degraded (the last sync failed): the replica keeps its own view and keeps routing.
 * Memory: the index is capped at `edge.replicaMaxChunks` (LRU via the index budget), the queue
 * at `edge.bufferMaxRecords`.
 */
import type { LoadBoardOptions, OriginLoadView } from "../load-board/load-board.ts";
import { policyTraits } from "../policies/index.ts";
import { prefillWork } from "../prefill-work.ts";
import { pinnedDecision, STORED_RESPONSE_REASON } from "../responses/stored-route.ts";
import type { RouteRequest } from "../route-request.ts";
import { CoreRouter } from "../router/core-router.ts";
import type { FailureKind, Outcome, RouteDecision, RouterStats } from "../router/router-types.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { announces } from "./announce.ts";
import { DecayedRate } from "./decayed-rate.ts";
import { edgeIndexPool, strided } from "./edge-grain.ts";
import { type LoadEffect, LoadOverlay, type SignedEffect } from "./load-overlay.ts";
import type { Batch } from "./record-buffer.ts";
import { type ReplicaCounters, ReplicaSync } from "./replica-sync.ts";
import { pickAlone, pickAmongBest, requestSeed, unseenSince } from "./stale-pick.ts";
import type {
  HotPrefixEntry,
  PoolRate,
  PushFrame,
  RouteRecord,
  SyncAnswer,
  SyncRequest,
  ViewVersion,
} from "./sync-protocol.ts";

export interface EdgeReplicaOptions {
  model: string;
  /** This isolate's id, unique per isolate start; it prefixes the replica's tickets. */
  isolate: string;
}

interface LiveEffect extends LoadEffect {
  readonly at: number;
  /** Its route record as first sent: sent again, to this origin, if the coordinator restarts. */
  readonly route: RouteRecord;
}

/** The pool a replica's router runs: its index on the edge's grain, capped for an isolate. */
export function replicaPool(pool: PoolSettings): PoolSettings {
  return { ...edgeIndexPool(pool), indexMaxChunks: pool.edge.replicaMaxChunks };
}

export class EdgeReplica {
  readonly isolate: string;
  #pool: PoolSettings;
  readonly #router: CoreRouter;
  readonly #sync: ReplicaSync;
  readonly #overlay = new LoadOverlay();
  /**
   * This isolate's live tickets and what each put on its origin: the load the overlay and the
   * records must take back when the ticket ends. Not the router's tickets: those expire with
   * their lease, and a late end must still take back what was added (until `#forgetLost`).
   */
  readonly #live = new Map<string, LiveEffect>();
  #rate: PoolRate = { requestsPerSecond: 0, meanPrefillWork: 0 };
  /** This isolate's own decisions, measured as the coordinators measure the pool's. */
  readonly #own = new DecayedRate();
  #hot: readonly HotPrefixEntry[] = [];
  /** Tickets of pinned requests (`routeTo`): `-` is no base-36 digit, so none is the router's. */
  #pinned = 0;

  constructor(pool: PoolSettings, options: EdgeReplicaOptions) {
    this.isolate = options.isolate;
    this.#pool = pool;
    this.#sync = new ReplicaSync(options.isolate, () => this.#pool);
    const fresh = (): Pick<LoadBoardOptions, "reportFreshMs" | "reportStaleMs"> => this.#pool;
    this.#router = new CoreRouter(replicaPool(pool), {
      model: options.model,
      ticketPrefix: `${options.isolate}-`,
      edge: {
        // Routing alone, the frozen vector no longer says where load is: only this isolate's own.
        load: (id, own, now) =>
          this.#alone(now) ? own : this.#overlay.view(id, own, now, fresh()),
        seed: (context) => requestSeed(context, this.#pool.edge.keyChunks, this.#hot),
        pick: (context, decision) =>
          this.#alone(context.now)
            ? pickAlone(context, decision, this.#pool.edge.keyChunks, this.#hot)
            : pickAmongBest(
                policyTraits(this.#pool.policy.type).load,
                context,
                decision,
                this.#unseen(context.now),
              ),
      },
    });
  }

  get router(): CoreRouter {
    return this.#router;
  }

  /** The last sync failed: the replica routes on its own view until one succeeds. */
  get degraded(): boolean {
    return this.#sync.degraded;
  }

  /** What the replica counts of its syncs and its view (replica-sync.ts). */
  get counters(): ReplicaCounters {
    return this.#sync.counters;
  }

  /**
   * The view is older than `maxStalenessMs`: the coordinator has not answered for that long, or
   * this isolate was idle past `warmMs` and stopped syncing. Route alone (stale-pick.ts,
   * `pickAlone`) until an answer comes.
   */
  #alone(now: number): boolean {
    const at = this.#overlay.at;
    return at !== null && now - at > this.#pool.edge.maxStalenessMs;
  }

  /**
   * Whether the next request should wait for one sync before it is routed: the replica has no
   * view (cold), or its view is older than `maxStalenessMs` (the isolate idled past `warmMs`
   * and stopped syncing), and its last sync did not fail (a coordinator known not to answer is
   * not waited for: the replica routes alone, `pickAlone`). The Worker waits within the pool's
   * `routeTimeoutMs`; one sync then makes the view fresh.
   */
  syncFirst(now: number): boolean {
    if (this.degraded) return false;
    const at = this.#overlay.at;
    return at === null || now - at > this.#pool.edge.maxStalenessMs;
  }

  /** Age of the view (since the last answer arrived), or null before the first. */
  viewAgeMs(now: number): number | null {
    const at = this.#overlay.at;
    return at === null ? null : now - at;
  }

  /**
   * Records waiting to be sent (not counting the batch in flight), those dropped, and of them
   * the ends and cancels (record-buffer.ts says when any is).
   */
  get waiting(): { records: number; dropped: number; droppedEnds: number } {
    return this.#sync.waiting;
  }

  applySettings(pool: PoolSettings): void {
    this.#pool = pool;
    this.#router.applySettings(replicaPool(pool));
  }

  /**
   * The pool's best origin's wait before a prefill starts, as this replica sees the pool (its
   * coordinator's load vector plus its own records since): what admission gates on in edge
   * mode (src/core/admission), so a replica holds one `Admission` over itself.
   */
  waitMs(now: number, meanWork: number): number {
    return this.#router.waitMs(now, meanWork);
  }

  /** The request's prompt tokens at the pool's bytes per token, as the coordinator learned it. */
  promptTokens(request: RouteRequest): number {
    return this.#router.promptTokens(request);
  }

  /** Route a request (its chunk hashes as the edge computed them, every chunk). */
  route(request: RouteRequest, now: number): RouteDecision {
    this.#sync.requested(now);
    const hashes = strided(request.chunkHashes, this.#pool.edge.chunkStride);
    const decision = this.#router.route({ ...request, chunkHashes: hashes }, now);
    const { ticket, origin, matchedTokens, reason } = decision;
    if (ticket === null || origin === null) return decision;
    const { promptBytes } = request;
    const promptTokens = this.#router.promptTokens(request);
    const held = Math.min(hashes.length, Math.floor(matchedTokens / this.#router.tokensPerChunk));
    const parent = held > 0 ? (hashes[held - 1] as number) : null;
    const run: number[] = [];
    for (let i = held; i < hashes.length; i++) run.push(hashes[i] as number);
    const record: RouteRecord = {
      t: "route",
      ticket,
      origin,
      parent,
      run,
      promptTokens,
      promptBytes,
      reason,
    };
    const effect = this.#effect(origin, promptTokens, matchedTokens, now, record);
    this.#own.add(effect.work, now);
    this.#live.set(ticket, effect);
    this.#overlay.add(effect, 1);
    this.#sync.push(record, [[effect, 1]], now, this.#announces(effect));
    return decision;
  }

  /**
   * A request pinned to `origin` (a Responses follow-up: core/responses/stored-route.ts): no
   * policy, leased and claimed there (`record`) and queued for the coordinator as `route`'s
   * decisions are. Null when `origin` is not in this replica's settings.
   */
  routeTo(origin: string, request: RouteRequest, now: number): RouteDecision | null {
    this.#sync.requested(now);
    const hashes = strided(request.chunkHashes, this.#pool.edge.chunkStride);
    const ticket = `${this.isolate}-pin-${(this.#pinned++).toString(36)}`;
    const { promptBytes } = request;
    const promptTokens = this.#router.promptTokens(request);
    const reason = STORED_RESPONSE_REASON;
    const route = {
      origin,
      parent: null,
      run: Array.from(hashes),
      promptTokens,
      promptBytes,
      reason,
    };
    const claim = this.#router.seams.record(ticket, route, now);
    if (claim === null) return null;
    const decision = pinnedDecision(this.#router, origin, ticket, promptTokens, claim.heldChunks);
    const record: RouteRecord = { t: "route", ticket, ...route };
    const effect = this.#effect(origin, promptTokens, decision.matchedTokens, now, record);
    this.#own.add(effect.work, now);
    this.#live.set(ticket, effect);
    this.#overlay.add(effect, 1);
    this.#sync.push(record, [[effect, 1]], now);
    return decision;
  }

  /**
   * When request `ticket` may start (its origin fetch): now, or, for a long prefill announced
   * first, `flushMs` after the answer to the sync that carried its record (null until then).
   */
  startAt(ticket: string, now: number): number | null {
    return this.#sync.startAt(ticket, now);
  }

  /** A long prefill, with a coordinator that answers: announced first (announce.ts). */
  #announces(effect: LiveEffect): boolean {
    if (!this.#sync.answered || this.degraded) return false;
    const speed = this.#router.prefillSpeed(effect.origin) ?? this.#pool.prefillTokensPerSecond;
    return announces((effect.work / speed) * 1000, this.#pool.edge.flushMs + this.#sync.rttMs);
  }

  reroute(ticket: string, failure: FailureKind, next: string, now: number): number | null {
    const matched = this.#router.reroute(ticket, failure, next, now);
    const old = this.#live.get(ticket);
    if (matched === null || !old) return matched;
    const moved = this.#effect(next, old.promptTokens, matched, now, old.route);
    this.#live.set(ticket, moved);
    const effects: SignedEffect[] = [
      [old, -1],
      [moved, 1],
    ];
    for (const [e, sign] of effects) this.#overlay.add(e, sign);
    this.#sync.push({ t: "reroute", ticket, failure, next }, effects, now);
    return matched;
  }

  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const known = this.#router.complete(ticket, outcome, now);
    this.#sync.forget(ticket);
    const effect = this.#live.get(ticket);
    if (!effect) return known;
    this.#live.delete(ticket);
    this.#overlay.add(effect, -1);
    this.#sync.end({ t: "end", ticket, outcome }, [[effect, -1]], now);
    return known;
  }

  cancel(ticket: string, now: number): boolean {
    const known = this.#router.cancel(ticket, now);
    this.#sync.forget(ticket);
    const effect = this.#live.get(ticket);
    if (!effect) return known;
    this.#live.delete(ticket);
    this.#overlay.add(effect, -1);
    this.#sync.push({ t: "cancel", ticket }, [[effect, -1]], now);
    return known;
  }

  /** When this replica wants to sync next (at or before `now`: at once), or null. */
  nextSyncAt(now: number): number | null {
    return this.#sync.nextSyncAt(now, this.syncFirst(now));
  }

  /** The sync to send now (a retry resends the unacknowledged batch); null while one is out. */
  startSync(now: number): SyncRequest | null {
    return this.#sync.startSync(now);
  }

  /** The coordinator answered the sync in flight: its records, then its view of the pool. */
  onAnswer(answer: SyncAnswer, now: number): void {
    // First, so a ticket forgotten as lost is not sent again after a restart.
    this.#forgetLost(now);
    const { restarted, fresh } = this.#sync.onAnswer(answer, now, this.#router);
    if (restarted) this.#sync.resend(this.#unheld(restarted), now);
    // The routes sent again count in the overlay until the vector counts them. An older
    // coordinator's answer (no loadSeq) holds the whole vector. An answer older than the frames
    // applied while it was out brings no load (theirs is newer), but acknowledged its batch.
    if (!fresh) {
      this.#overlay.rebase([], now, this.#sync.pendingEffects());
      return;
    }
    const whole = answer.loadSeq === undefined;
    this.#overlay.rebase(answer.load, now, this.#sync.pendingEffects(), whole);
    this.#rate = answer.rate;
    this.#hot = answer.hot;
  }

  /**
   * A frame from the coordinator's socket (replica-sync.ts, `onFrame`): applied when it
   * follows this view, else a gap (the replica syncs at once). `acked`: this isolate's batch in
   * flight was applied.
   */
  onFrame(frame: PushFrame, now: number): { applied: boolean; acked: boolean } {
    const { applied, acked, load } = this.#sync.onFrame(frame, now, this.#router);
    if (applied) {
      this.#overlay.rebase(load, now, this.#sync.pendingEffects());
      this.#rate = frame.rate;
      this.#hot = frame.hot;
      this.#forgetLost(now);
    }
    return { applied, acked };
  }

  /** Until when this replica stays warm (`warmMs` after its last request). */
  get warmUntil(): number {
    return this.#sync.warmUntil;
  }

  /** Whether this replica's socket is open (replica-sync.ts, `setPushing`). */
  setPushing(on: boolean): void {
    this.#sync.setPushing(on);
  }

  /** When this replica, pushing, wants to send a batch up its socket, or null. */
  nextUploadAt(now: number): number | null {
    return this.#sync.nextUploadAt(now);
  }

  /** The batch to send up the socket now, or null (replica-sync.ts, `startUpload`). */
  startUpload(now: number): Batch | null {
    return this.#sync.startUpload(now);
  }

  /** The view this replica holds (what a socket it opens names, for its catch-up). */
  get since(): ViewVersion | null {
    return this.#sync.since;
  }

  /** The sync in flight failed (no answer in time, or an error): degraded until one succeeds. */
  onFailure(_now: number): void {
    this.#sync.onFailure();
  }

  /** Each origin's load as this replica's policy reads it now (vector plus own records since). */
  loads(now: number): { id: string; load: OriginLoadView }[] {
    return this.#router
      .loads(now)
      .map(({ id, load }) => ({ id, load: this.#overlay.view(id, load, now, this.#pool) }));
  }

  stats(now: number): RouterStats {
    return this.#router.stats(now);
  }

  #effect(
    origin: string,
    promptTokens: number,
    matched: number,
    now: number,
    route: RouteRecord,
  ): LiveEffect {
    const attention = this.#pool.prefillAttentionTokens;
    const work = prefillWork(matched, promptTokens, attention);
    const uncachedTokens = promptTokens - matched;
    return { origin, promptTokens, uncachedTokens, work, at: now, route };
  }

  /**
   * What the view misses: the other isolates' traffic over its staleness, capped (degraded
   * mode). Staleness: the view's age since it arrived, plus a round trip (half of it the answer's
   * way back, half another isolate's record's way in, taking its distance as this isolate's),
   * plus half a flush interval (how long that record waited on average before it was sent).
   */
  #unseen(now: number) {
    const at = this.#overlay.at;
    const { flushMs, maxStalenessMs } = this.#pool.edge;
    const staleness =
      at === null ? 0 : Math.min(maxStalenessMs, now - at + this.#sync.rttMs + flushMs / 2);
    // This isolate's own decisions are all seen: only the others' are missing.
    const own = this.#own.read(now);
    const others = Math.max(0, this.#rate.requestsPerSecond - own.requestsPerSecond);
    return unseenSince({ ...this.#rate, requestsPerSecond: others }, staleness);
  }

  /**
   * After a coordinator restart, each live request whose route its new life lacks (not in
   * `held`): its route to the origin serving it now, and its load there (issue 23, defect C).
   */
  *#unheld(held: ReadonlySet<string>): Iterable<readonly [RouteRecord, SignedEffect[]]> {
    for (const [ticket, e] of this.#live) {
      if (!held.has(ticket)) yield [{ ...e.route, origin: e.origin }, [[e, 1]]];
    }
  }

  /** Tickets whose end never came stop counting once their lease would have expired. */
  #forgetLost(now: number): void {
    for (const [ticket, e] of this.#live) {
      if (now - e.at > this.#pool.leaseMs) {
        this.#live.delete(ticket);
        this.#sync.forget(ticket);
      }
    }
  }
}
