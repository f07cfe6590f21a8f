/**
 * A coordinator of an edge-coordinated pool (docs/architecture.md, "Scale: two coordination
 * modes"): one per group of colos, it holds the pool's state as its isolates report it (a
 * `CoreRouter` applying their records: the index of every claim, the leases of every request
 * in flight, capacity learned from every completion) and answers each replica's sync with what
 * the other isolates changed since that replica's version.
 *
 * `sync(request)`:
 * 1. The batch, unless this isolate's batch of that id was applied already (a retry after a
 *    lost answer: answered `duplicate`, applied once). Each route record is leased and claimed
 *    (`CoreRouter.record`; a path whose parent this index lacks is leased, not claimed, and
 *    counted `unanchored`), then logged for the others as a claim after the deepest chunk any
 *    origin held before it; a reroute, an end before the first byte and a cancel log a drop of
 *    what the claim added, as the router's live ticket holds it (`seams.claimOf`: no ticket
 *    map beside the router's). An end carries the engine's cached tokens, which teach capacity.
 *    A route sent `again` (a request still running when this coordinator restarted, re-sent
 *    by its replica: replica-sync.ts) is leased as any route, not counted as a new decision.
 * 2. The answer: the records after the replica's version (at most `edge.answerMaxBytes` of
 *    them: past that, `more` and the replica asks again), its own included (delta-log.ts), or a
 *    bootstrap when it has no view, holds one from another epoch (this coordinator restarted:
 *    versions restarted with it, so an old version would name other records) or is behind the
 *    log; then the load entries changed since the replica's last (load-changes.ts; this group's
 *    leases plus the other groups' from the root), each origin's learned capacity, the pool's
 *    decision rate and the hottest prefixes.
 *
 * Push: `upload` applies a batch sent up a socket (the ledger's rules); `frame` builds, once a
 * tick, what changed since the last frame for every socket alike; `catchUp` is what a newly
 * opened socket gets alone (push-frame.ts, load-changes.ts).
 *
 * With several coordinators, each exchanges with the root every `rootIntervalMs`
 * (`rootReport` / `onRootAnswer`): its group's load out, the other groups' load and the
 * engines' state (webhooks: load, health, capacity, cache resets) in. Claims stay within the
 * group: users keep to their colo, and a prefix another group made hot is learned here from
 * this group's own traffic.
 */
import type { EngineEvent, Health } from "../engine-events.ts";
import { prefillWork } from "../prefill-work.ts";
import { CoreRouter } from "../router/core-router.ts";
import type { LiveClaim } from "../router/edge-hooks.ts";
import type { Outcome, RouterStats } from "../router/router-types.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { addRates, DecayedRate } from "./decayed-rate.ts";
import { DeltaLog } from "./delta-log.ts";
import { edgeIndexPool } from "./edge-grain.ts";
import { IsolateCensus, type IsolateCount } from "./isolate-census.ts";
import { LoadChanges } from "./load-changes.ts";
import { downRecordJsonBytes } from "./record-bytes.ts";
import { SHARED_HEAT } from "./stale-pick.ts";
import { boundedSnapshot } from "./summary.ts";
import type {
  DownRecord,
  HotPrefixEntry,
  LoadShare,
  OriginLoadEntry,
  PoolRate,
  PushFrame,
  RootAnswer,
  RootReport,
  SyncAnswer,
  SyncRequest,
  UpRecord,
  ViewVersion,
} from "./sync-protocol.ts";

export interface EdgeCoordinatorOptions {
  model: string;
  /** This coordinator's life: unique per start (the object draws a random id), with no `.`. */
  epoch: string;
  /** Its name in root reports (its colo group). */
  id: string;
}

/** Isolates whose last batch id is remembered (least recently synced forgotten first). */
const LEDGER_ISOLATES = 4096;
/** A bootstrap summary is rebuilt at most this often (it costs O(index)). */
const SUMMARY_REFRESH_MS = 5000;
/** Hot prefixes in each answer. */
const HOT_SENT = 4;
const NO_RATE: PoolRate = { requestsPerSecond: 0, meanPrefillWork: 0 };

export interface CoordinatorCounters {
  syncs: number;
  duplicates: number;
  bootstraps: number;
  recordsApplied: number;
  recordsSent: number;
  /** Answers cut at `edge.answerMaxBytes` of records (the replica asked again for the rest). */
  capped: number;
  /** Route records whose parent this index lacked: leased, not claimed. */
  unanchored: number;
  /** Push frames built (each sent, the same bytes, to every socket). */
  frames: number;
}

/** What this coordinator last applied of the root's engine state, per origin. */
interface EngineSeen {
  seq: number;
  /** The last prefill-rate number applied (the root numbers both in one sequence). */
  rateSeq: number;
  /** Null until this root life first states it: then it is applied whatever it is. */
  health: Health | null;
  capacity: number | null;
  resets: number;
}

export class EdgeCoordinator {
  readonly id: string;
  /** The object's life, given at construction. */
  readonly #life: string;
  /** Delta logs replaced in this life (each starts a new epoch: versions restart with it). */
  #logs = 0;
  #pool: PoolSettings;
  readonly #router: CoreRouter;
  #log: DeltaLog;
  /** Per isolate, the id of its last applied batch. */
  readonly #ledger = new Map<string, number>();
  readonly #rate = new DecayedRate();
  #others = new Map<string, LoadShare>();
  #othersRate: PoolRate = NO_RATE;
  #rootEpoch: string | null = null;
  readonly #seen = new Map<string, EngineSeen>();
  /** Which load entries changed when (defect G). */
  readonly #changes = new LoadChanges();
  /** Per isolate, its last batch applied since the last frame (the next frame acknowledges). */
  readonly #acks = new Map<string, number>();
  /** Where the last frame left off; null before the first. */
  #framed: { epoch: string; version: number; loadSeq: number; at: number } | null = null;
  #summary: { version: number; bytes: Uint8Array; at: number } | null = null;
  /** Distinct isolates heard from (`/admin/state`: the unknown of edge mode's bill). */
  readonly #census = new IsolateCensus();
  readonly counters: CoordinatorCounters = {
    syncs: 0,
    duplicates: 0,
    bootstraps: 0,
    recordsApplied: 0,
    recordsSent: 0,
    capped: 0,
    unanchored: 0,
    frames: 0,
  };

  constructor(pool: PoolSettings, options: EdgeCoordinatorOptions) {
    if (options.epoch.includes(".")) {
      // `.` separates the life from the log's generation (sync-protocol.ts, `lifeOf`).
      throw new Error(`EdgeCoordinator: epoch ${JSON.stringify(options.epoch)} contains "."`);
    }
    this.id = options.id;
    this.#life = options.epoch;
    this.#pool = pool;
    this.#router = new CoreRouter(edgeIndexPool(pool), {
      model: options.model,
      ticketPrefix: "coordinator-",
    });
    this.#log = new DeltaLog(pool.edge.logMaxRecords);
  }

  get router(): CoreRouter {
    return this.#router;
  }

  /**
   * What a replica's version is counted in: the object's life, and within it the delta log
   * (a log replaced by `applySettings` restarts its versions, so it is a new epoch).
   */
  get epoch(): string {
    return this.#logs === 0 ? this.#life : `${this.#life}.${this.#logs}`;
  }

  /** Records logged so far in this epoch. */
  get version(): number {
    return this.#log.version;
  }

  applySettings(pool: PoolSettings): void {
    if (pool.edge.logMaxRecords !== this.#pool.edge.logMaxRecords) {
      // The new log's versions restart at 0: under the old epoch a replica's version would name
      // the new log's records and skip what it missed. A new epoch makes every replica
      // bootstrap once (issue 23, defect B).
      this.#log = new DeltaLog(pool.edge.logMaxRecords);
      this.#logs++;
      this.#summary = null;
    }
    this.#pool = pool;
    this.#router.applySettings(edgeIndexPool(pool));
  }

  sync(request: SyncRequest, now: number): SyncAnswer {
    const c = this.counters;
    c.syncs++;
    const { isolate, batch, since } = request;
    this.#census.see(isolate, now);
    const duplicate = batch ? this.upload(isolate, batch, now) === "duplicate" : false;
    let bootstrap: Uint8Array | null = null;
    let from: number;
    if (since !== null && since.epoch === this.epoch && this.#log.covers(since.version)) {
      from = since.version;
    } else {
      const summary = this.#summaryAt(now);
      bootstrap = summary.bytes;
      from = summary.version;
      c.bootstraps++;
    }
    // At most answerMaxBytes of records: a replica further behind gets the oldest and asks
    // again at once for the rest (`more`), rather than one answer of megabytes after a blip.
    const records: DownRecord[] = this.#log.after(from, this.#pool.edge.answerMaxBytes);
    const version = from + records.length;
    const more = version < this.#log.version;
    if (more) c.capped++;
    c.recordsSent += records.length;
    // Only the entries changed since the replica's last (defect G), unless it starts afresh.
    const vector = this.#vector(now);
    this.#changes.mark(vector, now);
    const known = bootstrap === null ? since?.load : undefined;
    return {
      epoch: this.epoch,
      version,
      more,
      duplicate,
      bootstrap,
      records,
      load: known === undefined ? vector : this.#changes.after(vector, known),
      loadSeq: this.#changes.seq,
      bytesPerToken: this.#router.bytesPerToken,
      rate: addRates(this.#rate.read(now), this.#othersRate),
      hot: this.#hottest(now),
    };
  }

  /**
   * Apply an isolate's batch (from a sync, or sent up its socket), unless its batch of that id
   * was applied already; either way the next frame acknowledges it.
   */
  upload(
    isolate: string,
    batch: NonNullable<SyncRequest["batch"]>,
    now: number,
  ): "applied" | "duplicate" {
    this.#census.see(isolate, now);
    this.#acks.set(isolate, Math.max(batch.id, this.#acks.get(isolate) ?? 0));
    const last = this.#ledger.get(isolate);
    if (last !== undefined && batch.id <= last) {
      this.counters.duplicates++;
      return "duplicate";
    }
    for (const r of batch.records) this.#apply(r, now);
    this.counters.recordsApplied += batch.records.length;
    this.#remember(isolate, batch.id);
    return "applied";
  }

  /**
   * The frame every socket gets this tick (push-frame.ts): what changed since the last frame
   * (records, load entries, batches applied), built once whatever the number of isolates.
   * Null when nothing changed and the last frame left less than `flushMs` ago; with nothing
   * changed a frame still goes every `flushMs`, so replicas know their view is fresh.
   */
  frame(now: number): PushFrame | null {
    const epoch = this.epoch;
    const last = this.#framed;
    // After a new epoch (or a log overrun within one tick) frames restart where the log
    // stands: replicas holding the old versions find a gap and sync.
    const from =
      last && last.epoch === epoch && this.#log.covers(last.version)
        ? last.version
        : this.#log.oldest;
    const built = this.#frameFrom(from, last?.loadSeq ?? 0, now);
    const acks = [...this.#acks];
    if (built.records.length + built.load.length + acks.length === 0) {
      if (last && now - last.at < this.#pool.edge.flushMs) return null;
    }
    this.#acks.clear();
    this.#framed = { epoch, version: built.version, loadSeq: built.loadSeq, at: now };
    this.counters.frames++;
    return { ...built, acks };
  }

  /**
   * What a socket opened by a replica at `since` gets first, alone: the frames it missed while
   * it had none, and its own last applied batch (its batch in flight may have been applied
   * over the old socket). Null when its view is of another epoch or behind the log: its first
   * frame then shows a gap, and it syncs (a bootstrap).
   */
  catchUp(isolate: string, since: ViewVersion | null, now: number): PushFrame | null {
    if (since === null || since.epoch !== this.epoch || !this.#log.covers(since.version)) {
      return null;
    }
    const built = this.#frameFrom(since.version, since.load ?? 0, now);
    const batch = this.#ledger.get(isolate);
    return { ...built, acks: batch === undefined ? [] : [[isolate, batch]] };
  }

  #frameFrom(from: number, loadFrom: number, now: number): Omit<PushFrame, "acks"> {
    const records = this.#log.after(from, this.#pool.edge.answerMaxBytes, downRecordJsonBytes);
    const version = from + records.length;
    const vector = this.#vector(now);
    this.#changes.mark(vector, now);
    this.counters.recordsSent += records.length;
    return {
      epoch: this.epoch,
      from,
      version,
      more: version < this.#log.version,
      records,
      loadFrom,
      loadSeq: this.#changes.seq,
      load: this.#changes.after(vector, loadFrom),
      bytesPerToken: this.#router.bytesPerToken,
      rate: addRates(this.#rate.read(now), this.#othersRate),
      hot: this.#hottest(now),
    };
  }

  /** Engine events for one origin (from the root, or webhooks where there is none). */
  ingest(originId: string, events: readonly EngineEvent[], now: number): boolean {
    const known = this.#router.ingest(originId, events, now);
    if (known && events.some((e) => e.type === "cache-reset")) {
      this.#log.push({ t: "reset", origin: originId });
    }
    return known;
  }

  /** This group's share of each origin's load and its decision rate, for the root. */
  rootReport(now: number): RootReport {
    return {
      coordinator: this.id,
      loads: this.#router.loads(now).map(({ id, load }) => ({
        id,
        outstanding: load.outstanding,
        activeTokens: load.activeTokens,
        prefillingTokens: load.prefillingTokens,
        queuedPrefillTokens: load.queuedPrefillTokens,
      })),
      rate: this.#rate.read(now),
    };
  }

  /** The root's answer: the other groups' load and rate, and the engines' state. */
  onRootAnswer(answer: RootAnswer, now: number): void {
    this.#others = new Map(answer.others.map((s) => [s.id, s]));
    this.#othersRate = answer.rate;
    if (answer.epoch !== this.#rootEpoch) {
      // A new root life numbers reports and counts resets afresh: take its state as it is.
      this.#rootEpoch = answer.epoch;
      this.#seen.clear();
    }
    for (const e of answer.engines) {
      let seen = this.#seen.get(e.id);
      if (!seen) {
        // Resets counted before this coordinator heard of them are forgotten here too (its
        // restored index may predate them): at worst an origin's claims are dropped once.
        // Health is applied as the root first states it: compared with a default `up`, a
        // restarted root's `up` would leave an origin this coordinator had down, down.
        seen = { seq: -1, rateSeq: -1, health: null, capacity: null, resets: 0 };
        this.#seen.set(e.id, seen);
      }
      const events: EngineEvent[] = [];
      if (e.health !== seen.health) events.push({ type: "health", status: e.health });
      if (e.capacityTokens !== null && e.capacityTokens !== seen.capacity) {
        events.push({ type: "capacity", kvCapacityTokens: e.capacityTokens });
      }
      if (e.resets > seen.resets) events.push({ type: "cache-reset" });
      Object.assign(seen, { health: e.health, capacity: e.capacityTokens, resets: e.resets });
      if (events.length > 0) this.ingest(e.id, events, now);
      if (e.load && e.load.seq > seen.seq) {
        seen.seq = e.load.seq;
        const { running, waiting, kvUsage, ageMs } = e.load;
        this.#router.ingest(e.id, [{ type: "load", running, waiting, kvUsage }], now - ageMs);
      }
      if (e.prefillRate && e.prefillRate.seq > seen.rateSeq) {
        seen.rateSeq = e.prefillRate.seq;
        const { tokensPerSecond, tokens, ageMs } = e.prefillRate;
        this.#router.ingest(e.id, [{ type: "prefill-rate", tokensPerSecond, tokens }], now - ageMs);
      }
    }
  }

  snapshot(): Uint8Array {
    return this.#router.snapshot();
  }

  /** Start from a snapshot (a restarted object): the index; leases start empty. */
  restore(bytes: Uint8Array): void {
    this.#router.restore(bytes);
  }

  /** Distinct isolates that synced since this coordinator's start and in the last hour. */
  isolates(now: number): IsolateCount {
    return this.#census.count(now);
  }

  stats(now: number): RouterStats {
    return this.#router.stats(now);
  }

  #apply(r: UpRecord, now: number): void {
    switch (r.t) {
      case "route": {
        const claim = this.#router.seams.record(r.ticket, r, now);
        if (!claim) return;
        const { hashes, heldChunks, deepestChunks } = claim;
        if (hashes.length === 0 && (r.parent !== null || r.run.length > 0)) {
          this.counters.unanchored++;
        }
        this.#claimDown(r.origin, hashes, deepestChunks);
        // A request sent again after a restart (`again`) was decided before: leased, not a
        // decision of the pool's rate.
        if (!r.again) {
          const tokensPerChunk = this.#router.tokensPerChunk;
          const matched = Math.min(r.promptTokens, heldChunks * tokensPerChunk);
          const attention = this.#pool.prefillAttentionTokens;
          this.#rate.add(prefillWork(matched, r.promptTokens, attention), now);
        }
        if (r.outcome) this.#end(r.ticket, r.outcome, now);
        return;
      }
      case "reroute": {
        const live = this.#router.seams.claimOf(r.ticket);
        const matched = this.#router.reroute(r.ticket, r.failure, r.next, now);
        if (matched === null || !live) return;
        this.#dropDown(live);
        this.#claimDown(r.next, live.hashes, Math.floor(matched / this.#router.tokensPerChunk));
        return;
      }
      case "end":
        this.#end(r.ticket, r.outcome, now);
        return;
      case "cancel": {
        const live = this.#router.seams.claimOf(r.ticket);
        if (this.#router.cancel(r.ticket, now) && live) this.#dropDown(live);
        return;
      }
      default: {
        const unknown: never = r;
        throw new Error(`unknown record ${JSON.stringify(unknown)}`);
      }
    }
  }

  #end(ticket: string, outcome: Outcome, now: number): void {
    const live = this.#router.seams.claimOf(ticket);
    const known = this.#router.complete(ticket, outcome, now);
    const unclaimed = !outcome.ok && outcome.failure !== undefined && outcome.failure !== "stream";
    if (known && live && unclaimed) this.#dropDown(live);
  }

  /** Log that `origin` holds `hashes`, after the first `anchor` chunks (held here before). */
  #claimDown(origin: string, hashes: ArrayLike<number>, anchor: number): void {
    if (hashes.length === 0) return;
    const a = Math.min(anchor, hashes.length);
    const parent = a > 0 ? (hashes[a - 1] as number) : null;
    const run: number[] = [];
    for (let i = a; i < hashes.length; i++) run.push(hashes[i] as number);
    this.#log.push({ t: "claim", origin, parent, run });
  }

  /** Log that the claim's origin holds no more than it held before it. */
  #dropDown(live: LiveClaim): void {
    const { origin, hashes, heldChunks: held } = live;
    if (held >= hashes.length) return;
    const parent = held > 0 ? (hashes[held - 1] as number) : null;
    this.#log.push({ t: "drop", origin, parent, from: hashes[held] as number });
  }

  #remember(isolate: string, batch: number): void {
    this.#ledger.delete(isolate);
    this.#ledger.set(isolate, batch);
    if (this.#ledger.size > LEDGER_ISOLATES) {
      const oldest = this.#ledger.keys().next().value as string;
      this.#ledger.delete(oldest);
    }
  }

  #summaryAt(now: number): { version: number; bytes: Uint8Array } {
    const s = this.#summary;
    if (s && now - s.at < SUMMARY_REFRESH_MS && this.#log.covers(s.version)) return s;
    const bytes = boundedSnapshot(this.#router.snapshot(), this.#pool.edge.bootstrapMaxChunks);
    this.#summary = { version: this.#log.version, bytes, at: now };
    return this.#summary;
  }

  #vector(now: number): OriginLoadEntry[] {
    return this.#router.loads(now).map(({ id, load, capacity, speed }) => {
      const o = this.#others.get(id);
      const engine = load.engine
        ? {
            running: load.engine.running,
            waiting: load.engine.waiting,
            kvUsage: load.engine.kvUsage,
            ageMs: load.reportAgeMs ?? 0,
          }
        : null;
      return {
        id,
        outstanding: load.outstanding + (o?.outstanding ?? 0),
        activeTokens: load.activeTokens + (o?.activeTokens ?? 0),
        prefillingTokens: load.prefillingTokens + (o?.prefillingTokens ?? 0),
        queuedPrefillTokens: load.queuedPrefillTokens + (o?.queuedPrefillTokens ?? 0),
        engine,
        measuredPrefill: load.measuredPrefill,
        health: load.health,
        eligible: load.eligible,
        capacity,
        speed,
      };
    });
  }

  #hottest(now: number): HotPrefixEntry[] {
    return this.#router.seams
      .hottest(HOT_SENT, now)
      .filter((p) => p.requests >= SHARED_HEAT)
      .map((p) => ({
        hash: p.hashes[p.depth - 1] as number,
        depth: p.depth,
        ratePerSecond: p.ratePerSecond,
      }));
  }
}
