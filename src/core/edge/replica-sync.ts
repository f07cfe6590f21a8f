/**
 * An edge replica's side of the sync protocol (docs/architecture.md, "Scale: two coordination
 * modes"): its queue of records, when it syncs, the batch it sends, what an answer changes in
 * its router, and which of its decisions wait to be announced. Routing is edge-replica.ts's;
 * this module never decides where a request goes.
 *
 * - Records: each route, reroute, end and cancel the replica makes is queued (record-buffer.ts)
 *   with the load it put on its origin, so the overlay can count the records not yet answered.
 * - Sync: `nextSyncAt` says when the replica wants to sync: at once when cold or when the last
 *   answer was cut at `answerMaxBytes` (`more`: the rest follows); when
 *   `flushRecords` records wait or the oldest has waited `flushMs`; and every `flushMs` for
 *   `warmMs` after a request even with nothing to report, so the view is fresh when the next
 *   request comes. The Worker calls `startSync` from a live request's `waitUntil` (timers run
 *   there for up to 30 s), sends the request, and hands back `onAnswer` or `onFailure`.
 *   One sync is in flight at a time.
 * - Answer: a bootstrap (restore from the summary) or nothing, then the coordinator's claims,
 *   drops and resets in order (its own again: delta-log.ts; a claim whose parent this index
 *   lacks is counted and skipped), then the pool's bytes per token and each origin's learned
 *   capacity and speed. The load vector, rate and hot prefixes are the routing side's.
 *   The copy of its own claim warms no prefix (`#ownClaims`): the claim warmed it when made, so
 *   each request counts once in the index's heat, as in object mode. Counted twice, a prefix
 *   read hot at half the requests, `cost` replicated it freely and charged its holders' decode,
 *   and one isolate with no lag had 0.88x object mode's capacity (capacity smoke run, seed 2).
 * - Announced first (announce.ts): a long prefill's record is synced soon (`flushMs` / 2
 *   after the last sync), and the request starts (`startAt`) `flushMs` after the answer, so
 *   the other isolates see it before it occupies its origin; in degraded mode nothing waits.
 *   Pushing, its batch goes up at once and the request starts when a frame acknowledges it:
 *   that frame carries its record to every other socket at the same moment, so no `flushMs`
 *   after it (conversation-8, I = 32, 10 seeds: mean TTFT 1.24x to 1.13x the synchronous
 *   router's, hit 0.98x to 1.00x, p99 unchanged). Which prefills are announced stays as with
 *   syncs (ten times `flushMs` and a round trip): ten times the push lag announced more and
 *   moved p99 from 1.09x to 1.13x.
 * - Degraded (the last sync failed): records wait (bounded) and go when the coordinator answers
 *   again; retries back off from `flushMs`, doubling, to at most 2 s.
 * - Push (`setPushing`, while the Worker holds a socket to the coordinator): batches go up the
 *   socket when `nextUploadAt` says (the same batches and ids as syncs) and are acknowledged
 *   by a frame; `onFrame` applies a frame that follows the view and reports a gap otherwise,
 *   after which `nextSyncAt` asks for a sync at once. Only a cold start, a view too old and a
 *   gap make it sync while it pushes. A sync answer that crossed frames (built before a frame
 *   the replica applied first) never sets the view back: it brings only what they did not.
 * - A coordinator restart (an answer from another life than the view's: `lifeOf`, not a new
 *   log in the same life) took its leases with it, so the requests still running here would
 *   count as no load and their ends be ignored (issue 23, defect C). `onAnswer` then names
 *   the tickets the new life holds already (their route was in the batch it just applied, or
 *   waits); the replica `resend`s the route of every other live request (`again`), and the
 *   sync that carries them goes at once: the coordinator's load vector is the truth again one
 *   round trip after the answer that showed the restart, the replica's own view at once.
 */
import type { CoreRouter } from "../router/core-router.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import type { SignedEffect } from "./load-overlay.ts";
import { type Batch, RecordBuffer } from "./record-buffer.ts";
import {
  type DownRecord,
  lifeOf,
  type OriginLoadEntry,
  type PushFrame,
  type RouteRecord,
  type SyncAnswer,
  type SyncRequest,
  type UpRecord,
  type ViewVersion,
} from "./sync-protocol.ts";

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
  /** Batches sent up the socket (retries included), frames received, frames with a gap. */
  uploads: number;
  frames: number;
  gaps: number;
  /** Answers from a new life of the coordinator (it restarted). */
  restarts: number;
  /** Routes of running requests sent again after a restart. */
  resent: number;
}

/** Longest wait between retries while the coordinator does not answer. */
const RETRY_MAX_MS = 2000;

/** A claim as origin and prompt tip: how a route's record and the log's copy of it agree. */
function claimKey(origin: string, parent: number | null, run: readonly number[]): string {
  return `${origin} ${run.at(-1) ?? parent}`;
}

export class ReplicaSync {
  readonly #isolate: string;
  readonly #pool: () => PoolSettings;
  readonly #buffer: RecordBuffer;
  #since: ViewVersion | null = null;
  /** The last answer was cut at `answerMaxBytes`: the rest is asked for at once. */
  #more = false;
  /** Routes sent again after a coordinator restart wait: they go at once. */
  #resent = false;
  #syncing = false;
  /**
   * Long prefills announced before they start: queued (the record waits for a sync), sent (in
   * the batch in flight), or the time its answer came.
   */
  readonly #announcing = new Map<string, "queued" | "sent" | number>();
  /**
   * This replica's routes sent whose claim has not come back in the log, by `claimKey`, oldest
   * first; at most twice `bufferMaxRecords` (a route the coordinator could not place never
   * comes back).
   */
  readonly #ownClaims = new Map<string, number>();
  /** Round trips of answered syncs, exponentially weighted (1/8 per answer, as TCP's SRTT). */
  #rttMs = 0;
  #failedInRow = 0;
  /** The socket is open: frames bring the view (`setPushing`). */
  #pushing = false;
  /** A frame did not follow this view: sync at once. */
  #gap = false;
  /** The batch the sync in flight carries. */
  #syncBatch: number | null = null;
  #uploadedAt = Number.NEGATIVE_INFINITY;
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
    uploads: 0,
    frames: 0,
    gaps: 0,
    restarts: 0,
    resent: 0,
  };

  /** `pool` reads the replica's current settings (they change with `applySettings`). */
  constructor(isolate: string, pool: () => PoolSettings) {
    this.#isolate = isolate;
    this.#pool = pool;
    this.#buffer = new RecordBuffer(pool().edge.bufferMaxRecords);
  }

  /** The last sync failed: the replica routes on its own view until one succeeds. */
  get degraded(): boolean {
    return this.#failedInRow > 0;
  }

  /** The coordinator has answered once at least (the replica has a view to announce against). */
  get answered(): boolean {
    return this.#since !== null;
  }

  /** The view this replica holds; null before the first answer. */
  get since(): ViewVersion | null {
    return this.#since;
  }

  /** Round trip of answered syncs, smoothed. */
  get rttMs(): number {
    return this.#rttMs;
  }

  /** Records waiting to be sent (not counting the batch in flight), those dropped, ends among them. */
  get waiting(): { records: number; dropped: number; droppedEnds: number } {
    const b = this.#buffer;
    return { records: b.size, dropped: b.dropped, droppedEnds: b.droppedReleases };
  }

  /** The effects of the records not yet applied (the overlay's base after an answer or frame). */
  pendingEffects(): Iterable<SignedEffect> {
    return this.#buffer.pendingEffects();
  }

  /**
   * Whether this replica's socket is open (push): frames bring the view and batches go up the
   * socket (`nextUploadAt`), so it syncs only when cold, too stale, or after a gap.
   */
  setPushing(on: boolean): void {
    this.#pushing = on;
  }

  /** Until when the replica stays warm (`warmMs` after its last request). */
  get warmUntil(): number {
    return this.#lastRequestAt + this.#pool().edge.warmMs;
  }

  /** A request arrived: the replica stays warm for `warmMs` after it. */
  requested(now: number): void {
    this.#lastRequestAt = now;
  }

  /** Queue a record with the load it changed; `announced` holds its request until announced. */
  push(record: UpRecord, effects: SignedEffect[], now: number, announced = false): void {
    if (announced && record.t === "route") this.#announcing.set(record.ticket, "queued");
    if (record.t === "route") this.#sentClaim(claimKey(record.origin, record.parent, record.run));
    this.#buffer.push(record, effects, now);
  }

  /** Queue the end of a request (merged into its route record when that is still waiting). */
  end(record: UpRecord & { t: "end" }, effects: SignedEffect[], now: number): void {
    this.#buffer.end(record, effects, now);
  }

  /**
   * When request `ticket` may start (its origin fetch): now, or, for a long prefill announced
   * first, `flushMs` after the answer to the sync that carried its record, or as soon as a frame
   * carried it (null until then).
   */
  startAt(ticket: string, now: number): number | null {
    const state = this.#announcing.get(ticket);
    if (state === undefined) return now;
    if (typeof state !== "number") return null;
    return Math.max(now, state);
  }

  /** The request ended or was given up: it no longer waits for an announcement. */
  forget(ticket: string): void {
    this.#announcing.delete(ticket);
  }

  /**
   * When this replica wants to sync next (at or before `now`: at once), or null. `urgent`: the
   * view is too old to route on (the replica's `syncFirst`).
   */
  nextSyncAt(now: number, urgent: boolean): number | null {
    if (this.#syncing) return null;
    const { flushRecords, flushMs, warmMs } = this.#pool().edge;
    // After failures, back off (x2 each, at most RETRY_MAX_MS) so an outage is not hammered,
    // whatever makes the sync due (cold-retry.test.ts).
    const failed = this.#failedInRow;
    const backoff = failed === 0 ? 0 : Math.min(RETRY_MAX_MS, flushMs * 2 ** (failed - 1));
    const earliest = this.#lastSyncAt + backoff;
    // Cold, a view too old to route on (syncFirst), the rest of a cut answer, routes to send
    // again after a restart, or a frame that did not follow this view: at once.
    if (this.#since === null || urgent || this.#more || this.#gap || this.#resent) {
      return Math.max(now, earliest);
    }
    // Pushing: the socket carries the records and the view.
    if (this.#pushing) return null;
    if (this.#buffer.size >= flushRecords) return Math.max(now, earliest);
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
    this.#resent = false;
    this.#lastSyncAt = now;
    this.counters.syncs++;
    const batch = this.#takeBatch();
    this.#syncBatch = batch?.id ?? null;
    return { isolate: this.#isolate, batch, since: this.#since };
  }

  /**
   * When this replica, pushing, wants to send a batch up its socket (at or before `now`: at
   * once), or null: at `flushRecords` records, `flushMs` after the oldest, at once for a long
   * prefill waiting to be announced; the batch in flight again when no frame acknowledged it
   * within `routeTimeoutMs` (sent on a socket since closed).
   */
  nextUploadAt(now: number): number | null {
    if (!this.#pushing || this.#since === null) return null;
    const { flushRecords, flushMs } = this.#pool().edge;
    if (this.#buffer.inFlight) return this.#uploadedAt + this.#pool().routeTimeoutMs;
    if (this.#buffer.size >= flushRecords || this.#waitingAnnouncement()) return now;
    const oldest = this.#buffer.oldestAt;
    return oldest === null ? null : oldest + flushMs;
  }

  /** The batch to send up the socket now (the one in flight again, when it is due), or null. */
  startUpload(now: number): Batch | null {
    const due = this.nextUploadAt(now);
    if (due === null || due > now) return null;
    this.#uploadedAt = now;
    this.counters.uploads++;
    return this.#takeBatch();
  }

  /** The batch to send (the one in flight again, else a new one), counted. */
  #takeBatch(): Batch | null {
    const retry = this.#buffer.inFlight !== null;
    const batch = this.#buffer.batch();
    if (batch) this.counters.recordsSent += batch.records.length;
    if (batch && !retry) {
      this.counters.recordsBatched += batch.records.length;
      for (const [ticket, state] of this.#announcing) {
        if (state === "queued") this.#announcing.set(ticket, "sent");
      }
    }
    return batch;
  }

  /**
   * Batch `id` was applied: its announced requests may start `waitMs` from now (`flushMs` after a
   * sync's answer, by when every warm isolate synced again; 0 after a frame, which every socket
   * got at once).
   */
  #acknowledge(id: number, now: number, waitMs: number): boolean {
    if (!this.#buffer.acknowledge(id)) return false;
    for (const [ticket, state] of this.#announcing) {
      if (state === "sent") this.#announcing.set(ticket, now + waitMs);
    }
    return true;
  }

  /**
   * The coordinator answered the sync in flight: the batch is acknowledged, and the answer's
   * index records, bytes per token, capacities and speeds go into `router`. `restarted`: null,
   * or, when the answer comes from a new life of the coordinator (it restarted), the tickets
   * whose route that life holds already or will get: every other live request is to be
   * `resend`. `fresh`: the answer's load, rate and hot prefixes are the newest this replica
   * has; false when frames applied while it was out brought newer ones.
   */
  onAnswer(
    answer: SyncAnswer,
    now: number,
    router: CoreRouter,
  ): { restarted: ReadonlySet<string> | null; fresh: boolean } {
    this.#syncing = false;
    this.#failedInRow = 0;
    this.#gap = false;
    const rtt = Math.max(0, now - this.#lastSyncAt);
    this.#rttMs = this.counters.answers === 0 ? rtt : this.#rttMs + (rtt - this.#rttMs) / 8;
    const since = this.#since;
    // The batch just answered was applied by the new life (or by it already: `duplicate`).
    const restarted =
      since !== null && lifeOf(since.epoch) !== lifeOf(answer.epoch)
        ? this.#buffer.routeTickets()
        : null;
    if (this.#syncBatch !== null)
      this.#acknowledge(this.#syncBatch, now, this.#pool().edge.flushMs);
    const c = this.counters;
    c.answers++;
    if (answer.duplicate) c.duplicates++;
    if (answer.bootstrap) {
      router.restore(answer.bootstrap);
      this.#ownClaims.clear();
      c.bootstraps++;
    }
    // Frames applied while the sync was out may have moved the view past the answer (a socket
    // and an RPC are two paths: a frame built after the answer can arrive before it). Set back,
    // the view's next frame would not follow it (a gap, and a needless sync) and the answer's
    // records would be applied twice; so only what the frames did not bring applies, and the
    // answer's load only if it is the newer.
    const held = answer.bootstrap ? null : this.#sameLog(answer);
    if (held) {
      const { records, version } = answer;
      this.#advance(
        held,
        version - records.length,
        version,
        answer.loadSeq ?? 0,
        records,
        now,
        router,
      );
      this.#more = answer.more === true && answer.version >= held.version;
    } else {
      this.#applyRecords(answer.records, now, router);
      this.#since = {
        epoch: answer.epoch,
        version: answer.version,
        // An older coordinator sends the whole vector and no number: none is claimed.
        ...(answer.loadSeq === undefined ? {} : { load: answer.loadSeq }),
      };
      this.#more = answer.more === true;
    }
    const fresh = !held || (answer.loadSeq ?? 0) >= held.load;
    if (fresh) this.#adopt(answer, now, router);
    if (restarted) this.counters.restarts++;
    return { restarted, fresh };
  }

  /**
   * The view held now, when `answer` is of its log and numbers its load (so the two compare:
   * versions and load numbers only grow within one log); null otherwise.
   */
  #sameLog(answer: SyncAnswer): (ViewVersion & { load: number }) | null {
    const since = this.#since;
    if (since === null || since.epoch !== answer.epoch || since.load === undefined) return null;
    if (answer.loadSeq === undefined) return null;
    return { epoch: since.epoch, version: since.version, load: since.load };
  }

  /**
   * A frame from the socket: applied when it follows this view (its records from the first this
   * view lacks, its load entries; a frame older than the view brings nothing), else a gap: the
   * replica syncs at once (`nextSyncAt`). Its acknowledgement of this isolate's batch in flight
   * counts either way. `applied`: the view moved; `load`: the entries newer than this view's
   * (none from a frame built before the answer this view came from), for the caller's overlay.
   */
  onFrame(
    frame: PushFrame,
    now: number,
    router: CoreRouter,
  ): { applied: boolean; acked: boolean; load: readonly OriginLoadEntry[] } {
    const c = this.counters;
    c.frames++;
    let acked = false;
    for (const [isolate, batch] of frame.acks) {
      if (isolate === this.#isolate) acked = this.#acknowledge(batch, now, 0) || acked;
    }
    const since = this.#since;
    const follows =
      since !== null &&
      since.epoch === frame.epoch &&
      frame.from <= since.version &&
      frame.loadFrom <= (since.load ?? -1);
    if (!follows) {
      c.gaps++;
      this.#gap = true;
      return { applied: false, acked, load: [] };
    }
    const view = { ...since, load: since.load ?? 0 };
    const load = frame.loadSeq > view.load ? frame.load : [];
    this.#advance(view, frame.from, frame.version, frame.loadSeq, frame.records, now, router);
    this.#adopt({ bytesPerToken: frame.bytesPerToken, load }, now, router);
    return { applied: true, acked, load };
  }

  /**
   * Records `from` to `version` of the view's log (a frame's, or a sync answer's that crossed
   * frames) into `router`, but those the view holds already, and the view forward to them,
   * never back: versions and load numbers only grow within one log.
   */
  #advance(
    view: ViewVersion & { load: number },
    from: number,
    version: number,
    loadSeq: number,
    records: readonly DownRecord[],
    now: number,
    router: CoreRouter,
  ): void {
    this.#applyRecords(records.slice(Math.max(0, view.version - from)), now, router);
    this.#since = {
      epoch: view.epoch,
      version: Math.max(view.version, version),
      load: Math.max(view.load, loadSeq),
    };
  }

  /** The coordinator's claims, drops and resets, in its order, into `router`. */
  #applyRecords(records: readonly DownRecord[], now: number, router: CoreRouter): void {
    const c = this.counters;
    const seams = router.seams;
    for (const r of records) {
      if (r.t === "claim") {
        const own = this.#claimBack(claimKey(r.origin, r.parent, r.run));
        if (seams.adopt(r.origin, r.parent, r.run, own, now)) c.claimsApplied++;
        else c.claimsUnplaced++;
      } else if (r.t === "drop") {
        seams.drop(r.origin, r.parent, r.from, now);
        c.drops++;
      } else {
        router.ingest(r.origin, [{ type: "cache-reset" }], now);
        c.resets++;
      }
    }
  }

  /** What the coordinator learned (bytes per token, capacities, speeds), into `router`. */
  #adopt(view: Pick<SyncAnswer, "bytesPerToken" | "load">, now: number, router: CoreRouter): void {
    const seams = router.seams;
    // An older coordinator (a deploy rolling out) sends neither: what was read before stands.
    if (view.bytesPerToken) seams.adoptBytesPerToken(view.bytesPerToken);
    for (const e of view.load) {
      seams.adoptCapacity(e.id, e.capacity);
      if (e.speed) seams.adoptSpeed(e.id, e.speed, now);
    }
  }

  /**
   * After a coordinator restart, the routes of this isolate's running requests that its new
   * life lacks, each with the load it puts on its origin; they go (`again`) at the next sync,
   * which is due at once.
   */
  resend(routes: Iterable<readonly [RouteRecord, SignedEffect[]]>, now: number): void {
    for (const [route, effects] of routes) {
      this.#buffer.push({ ...route, again: true }, effects, now);
      this.counters.resent++;
      this.#resent = true;
    }
  }

  /** The sync in flight failed (no answer in time, or an error): degraded until one succeeds. */
  onFailure(): void {
    this.#syncing = false;
    this.#failedInRow++;
    this.counters.failures++;
    // Degraded: nothing is announced; what waited starts now.
    for (const ticket of this.#announcing.keys()) this.#announcing.set(ticket, -Infinity);
  }

  /** This replica claimed `key` (its router warmed the prefix): the copy will not. */
  #sentClaim(key: string): void {
    this.#ownClaims.set(key, (this.#ownClaims.get(key) ?? 0) + 1);
    if (this.#ownClaims.size > 2 * this.#pool().edge.bufferMaxRecords) {
      this.#ownClaims.delete(this.#ownClaims.keys().next().value as string);
    }
  }

  /** Whether the log's claim `key` is the copy of one of this replica's own (taken once). */
  #claimBack(key: string): boolean {
    const n = this.#ownClaims.get(key);
    if (n === undefined) return false;
    if (n > 1) this.#ownClaims.set(key, n - 1);
    else this.#ownClaims.delete(key);
    return true;
  }

  /** A decision waits for a sync to announce it. */
  #waitingAnnouncement(): boolean {
    for (const state of this.#announcing.values()) if (state === "queued") return true;
    return false;
  }
}
