/**
 * An isolate's replica of its pool (docs/architecture.md, "Scale: two coordination modes"): it
 * routes every request itself, with the core's `CoreRouter` over its own copy of the pool's
 * index, and reports to its coordinator in batches. No coordinator call precedes an origin
 * fetch.
 *
 * - Grain: the replica and its coordinator index every `edge.chunkStride`-th chunk hash
 *   (edge-grain.ts), so applying the pool's claims costs an isolate stride-fold less.
 * - Routing: the pool's policy over this index, with the load of the coordinator's last
 *   vector plus this isolate's records since (load-overlay.ts), ties seeded by the request and
 *   a draw among the best candidates in proportion to what the others probably routed while
 *   the view was stale (stale-pick.ts).
 * - Records: each route, reroute, end and cancel is queued (record-buffer.ts) with the prompt
 *   as a path after the chunk the chosen origin was believed to hold (its new chunks only).
 * - Sync: `nextSyncAt` says when the replica wants to sync: at once when cold; when
 *   `flushRecords` records wait or the oldest has waited `flushMs`; and every `flushMs` for
 *   `warmMs` after a request even with nothing to report, so the view is fresh when the next
 *   request comes. The Worker calls `startSync` from a live request's `waitUntil` (timers run
 *   there for up to 30 s), sends the request, and hands back `onAnswer` or `onFailure`.
 *   One sync is in flight at a time.
 * - Answer: a bootstrap (restore from the summary) or nothing, then the coordinator's claims,
 *   drops and resets in order (its own again: delta-log.ts; a claim whose parent this index
 *   lacks is counted and skipped), then the
 *   vector, the coordinators' learned capacities, the pool's rate and its hot prefixes.
 * - Announced first (announce.ts): a long prefill's record is synced soon (`flushMs` / 2
 *   after the last sync), and the request starts (`startAt`) `flushMs` after the answer, so
 *   the other isolates see it before it occupies its origin; in degraded mode nothing waits.
 * - Cold or idle: with no view, or one older than `maxStalenessMs` (the isolate idled past
 *   `warmMs`), `syncFirst` says the next request should wait for one sync (the Worker does,
 *   within `routeTimeoutMs`); `nextSyncAt` then says at once.
 * - Degraded (the last sync failed): the replica keeps its own view and keeps routing; its
 *   records wait (bounded) and go when the coordinator answers again; retries back off from
 *   `flushMs`, doubling, to at most 2 s.
 * Memory: the index is capped at `edge.replicaMaxChunks` (LRU via the index budget), the queue
 * at `edge.bufferMaxRecords`.
 */
import type { LoadBoardOptions, OriginLoadView } from "../load-board/load-board.ts";
import { policyTraits } from "../policies/index.ts";
import { prefillWork } from "../prefill-work.ts";
import type { RouteRequest } from "../route-request.ts";
import { CoreRouter } from "../router/core-router.ts";
import type { FailureKind, Outcome, RouteDecision, RouterStats } from "../router/router-types.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { announces } from "./announce.ts";
import { DecayedRate } from "./decayed-rate.ts";
import { edgeIndexPool, strided } from "./edge-grain.ts";
import { type LoadEffect, LoadOverlay, type SignedEffect } from "./load-overlay.ts";
import { RecordBuffer } from "./record-buffer.ts";
import { pickAlone, pickAmongBest, requestSeed, unseenSince } from "./stale-pick.ts";
import type {
  HotPrefixEntry,
  PoolRate,
  SyncAnswer,
  SyncRequest,
  ViewVersion,
} from "./sync-protocol.ts";

export interface EdgeReplicaOptions {
  model: string;
  /** This isolate's id, unique per isolate start; it prefixes the replica's tickets. */
  isolate: string;
}

/** What a replica counts of its syncs and its view (for stats and the simulator). */
export interface ReplicaCounters {
  syncs: number;
  answers: number;
  failures: number;
  bootstraps: number;
  duplicates: number;
  /** Records sent, retries included. */
  recordsSent: number;
  /** Records put in a batch, once each. */
  recordsBatched: number;
  claimsApplied: number;
  /** Claims whose parent this index did not hold (the path unknown here). */
  claimsUnplaced: number;
  drops: number;
  resets: number;
}

/** Longest wait between retries while the coordinator does not answer. */
const RETRY_MAX_MS = 2000;

interface LiveEffect extends LoadEffect {
  readonly at: number;
}

/** The pool a replica's router runs: its index on the edge's grain, capped for an isolate. */
export function replicaPool(pool: PoolSettings): PoolSettings {
  return { ...edgeIndexPool(pool), indexMaxChunks: pool.edge.replicaMaxChunks };
}

export class EdgeReplica {
  readonly isolate: string;
  #pool: PoolSettings;
  readonly #router: CoreRouter;
  readonly #buffer: RecordBuffer;
  readonly #overlay = new LoadOverlay();
  /** This isolate's live tickets and what each put on its origin. */
  readonly #live = new Map<string, LiveEffect>();
  #since: ViewVersion | null = null;
  #rate: PoolRate = { requestsPerSecond: 0, meanPrefillWork: 0 };
  /** This isolate's own decisions, measured as the coordinators measure the pool's. */
  readonly #own = new DecayedRate();
  #hot: readonly HotPrefixEntry[] = [];
  #syncing = false;
  /**
   * Long prefills announced before they start: queued (the record waits for a sync), sent (in
   * the batch in flight), or the time its answer came.
   */
  readonly #announcing = new Map<string, "queued" | "sent" | number>();
  /** Round trips of answered syncs, exponentially weighted (1/8 per answer, as TCP's SRTT). */
  #rttMs = 0;
  #failedInRow = 0;
  #lastRequestAt = Number.NEGATIVE_INFINITY;
  #lastSyncAt = Number.NEGATIVE_INFINITY;
  readonly counters: ReplicaCounters = {
    syncs: 0,
    answers: 0,
    failures: 0,
    bootstraps: 0,
    duplicates: 0,
    recordsSent: 0,
    recordsBatched: 0,
    claimsApplied: 0,
    claimsUnplaced: 0,
    drops: 0,
    resets: 0,
  };

  constructor(pool: PoolSettings, options: EdgeReplicaOptions) {
    this.isolate = options.isolate;
    this.#pool = pool;
    this.#buffer = new RecordBuffer(pool.edge.bufferMaxRecords);
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
    return this.#failedInRow > 0;
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

  /** Records waiting to be sent (not counting the batch in flight), and those dropped. */
  get waiting(): { records: number; dropped: number } {
    return { records: this.#buffer.size, dropped: this.#buffer.dropped };
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
    this.#lastRequestAt = now;
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
    const effect = this.#effect(origin, promptTokens, matchedTokens, now);
    this.#own.add(effect.work, now);
    this.#live.set(ticket, effect);
    if (this.#announces(effect)) this.#announcing.set(ticket, "queued");
    this.#overlay.add(effect, 1);
    const record = {
      t: "route" as const,
      ticket,
      origin,
      parent,
      run,
      promptTokens,
      promptBytes,
      reason,
    };
    this.#buffer.push(record, [[effect, 1]], now);
    return decision;
  }

  /**
   * When request `ticket` may start (its origin fetch): now, or, for a long prefill announced
   * first, `flushMs` after the answer to the sync that carried its record (null until then).
   */
  startAt(ticket: string, now: number): number | null {
    const state = this.#announcing.get(ticket);
    if (state === undefined) return now;
    if (typeof state !== "number") return null;
    return Math.max(now, state + this.#pool.edge.flushMs);
  }

  /** A long prefill, with a coordinator that answers: announced first (announce.ts). */
  #announces(effect: LiveEffect): boolean {
    if (this.#since === null || this.degraded) return false;
    const speed = this.#router.prefillSpeed(effect.origin) ?? this.#pool.prefillTokensPerSecond;
    return announces((effect.work / speed) * 1000, this.#pool.edge.flushMs + this.#rttMs);
  }

  reroute(ticket: string, failure: FailureKind, next: string, now: number): number | null {
    const matched = this.#router.reroute(ticket, failure, next, now);
    const old = this.#live.get(ticket);
    if (matched === null || !old) return matched;
    const moved = this.#effect(next, old.promptTokens, matched, now);
    this.#live.set(ticket, moved);
    const effects: SignedEffect[] = [
      [old, -1],
      [moved, 1],
    ];
    for (const [e, sign] of effects) this.#overlay.add(e, sign);
    this.#buffer.push({ t: "reroute", ticket, failure, next }, effects, now);
    return matched;
  }

  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const known = this.#router.complete(ticket, outcome, now);
    this.#announcing.delete(ticket);
    const effect = this.#live.get(ticket);
    if (!effect) return known;
    this.#live.delete(ticket);
    this.#overlay.add(effect, -1);
    this.#buffer.end({ t: "end", ticket, outcome }, [[effect, -1]], now);
    return known;
  }

  cancel(ticket: string, now: number): boolean {
    const known = this.#router.cancel(ticket, now);
    this.#announcing.delete(ticket);
    const effect = this.#live.get(ticket);
    if (!effect) return known;
    this.#live.delete(ticket);
    this.#overlay.add(effect, -1);
    this.#buffer.push({ t: "cancel", ticket }, [[effect, -1]], now);
    return known;
  }

  /** When this replica wants to sync next (at or before `now`: at once), or null. */
  nextSyncAt(now: number): number | null {
    if (this.#syncing) return null;
    const { flushRecords, flushMs, warmMs } = this.#pool.edge;
    // After failures, back off (x2 each, at most RETRY_MAX_MS) so an outage is not hammered,
    // whatever makes the sync due (cold-retry.test.ts).
    const failed = this.#failedInRow;
    const backoff = failed === 0 ? 0 : Math.min(RETRY_MAX_MS, flushMs * 2 ** (failed - 1));
    const earliest = this.#lastSyncAt + backoff;
    // Cold, a view too old to route on (syncFirst), or a batch full: at once.
    if (this.#since === null || this.syncFirst(now) || this.#buffer.size >= flushRecords) {
      return Math.max(now, earliest);
    }
    const due: number[] = [];
    // A long prefill waits for its announcement: sync soon, but at most twice per flushMs.
    if (this.#waitingAnnouncement()) due.push(this.#lastSyncAt + flushMs / 2);
    const oldest = this.#buffer.oldestAt;
    if (oldest !== null) due.push(oldest + flushMs);
    if (this.#buffer.inFlight) due.push(this.#lastSyncAt + flushMs);
    const warm = this.#lastSyncAt + flushMs;
    if (warm <= this.#lastRequestAt + warmMs) due.push(warm);
    if (due.length === 0) return null;
    return Math.max(Math.min(...due), earliest);
  }

  /** The sync to send now (a retry resends the unacknowledged batch); null while one is out. */
  startSync(now: number): SyncRequest | null {
    if (this.#syncing) return null;
    this.#syncing = true;
    this.#lastSyncAt = now;
    this.counters.syncs++;
    const retry = this.#buffer.inFlight !== null;
    const batch = this.#buffer.batch();
    if (batch) this.counters.recordsSent += batch.records.length;
    if (batch && !retry) {
      this.counters.recordsBatched += batch.records.length;
      for (const [ticket, state] of this.#announcing) {
        if (state === "queued") this.#announcing.set(ticket, "sent");
      }
    }
    return { isolate: this.isolate, batch, since: this.#since };
  }

  /** The coordinator answered the sync in flight. */
  onAnswer(answer: SyncAnswer, now: number): void {
    this.#syncing = false;
    this.#failedInRow = 0;
    const rtt = Math.max(0, now - this.#lastSyncAt);
    this.#rttMs = this.counters.answers === 0 ? rtt : this.#rttMs + (rtt - this.#rttMs) / 8;
    this.#buffer.acknowledge();
    for (const [ticket, state] of this.#announcing) {
      if (state === "sent") this.#announcing.set(ticket, now);
    }
    const c = this.counters;
    c.answers++;
    if (answer.duplicate) c.duplicates++;
    if (answer.bootstrap) {
      this.#router.restore(answer.bootstrap);
      c.bootstraps++;
    }
    for (const r of answer.records) {
      if (r.t === "claim") {
        if (this.#router.adopt(r.origin, r.parent, r.run, now)) c.claimsApplied++;
        else c.claimsUnplaced++;
      } else if (r.t === "drop") {
        if (r.parent !== null) this.#router.adopt(r.origin, r.parent, [], now);
        this.#router.drop(r.origin, r.from);
        c.drops++;
      } else {
        this.#router.ingest(r.origin, [{ type: "cache-reset" }], now);
        c.resets++;
      }
    }
    this.#since = { epoch: answer.epoch, version: answer.version };
    this.#router.adoptBytesPerToken(answer.bytesPerToken);
    for (const e of answer.load) {
      this.#router.adoptCapacity(e.id, e.capacity);
      this.#router.adoptSpeed(e.id, e.speed, now);
    }
    this.#overlay.rebase(answer.load, now, this.#buffer.waitingEffects());
    this.#rate = answer.rate;
    this.#hot = answer.hot;
    this.#forgetLost(now);
  }

  /** The sync in flight failed (no answer in time, or an error): degraded until one succeeds. */
  onFailure(_now: number): void {
    this.#syncing = false;
    this.#failedInRow++;
    this.counters.failures++;
    // Degraded: nothing is announced; what waited starts now.
    for (const ticket of this.#announcing.keys()) this.#announcing.set(ticket, -Infinity);
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

  #effect(origin: string, promptTokens: number, matched: number, now: number): LiveEffect {
    const attention = this.#pool.prefillAttentionTokens;
    const work = prefillWork(matched, promptTokens, attention);
    return { origin, promptTokens, uncachedTokens: promptTokens - matched, work, at: now };
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
      at === null ? 0 : Math.min(maxStalenessMs, now - at + this.#rttMs + flushMs / 2);
    // This isolate's own decisions are all seen: only the others' are missing.
    const own = this.#own.read(now);
    const others = Math.max(0, this.#rate.requestsPerSecond - own.requestsPerSecond);
    return unseenSince({ ...this.#rate, requestsPerSecond: others }, staleness);
  }

  /** A decision waits for a sync to announce it. */
  #waitingAnnouncement(): boolean {
    for (const state of this.#announcing.values()) if (state === "queued") return true;
    return false;
  }

  /** Tickets whose end never came stop counting once their lease would have expired. */
  #forgetLost(now: number): void {
    for (const [ticket, e] of this.#live) {
      if (now - e.at > this.#pool.leaseMs) {
        this.#live.delete(ticket);
        this.#announcing.delete(ticket);
      }
    }
  }
}
