/**
 * The messages of edge coordination (docs/architecture.md, "Scale: two coordination modes"):
 * what an isolate's replica reports to its coordinator object, what the coordinator answers,
 * and what coordinators and the root exchange. All plain data (numbers, strings, arrays and one
 * Uint8Array), so each crosses Workers RPC by structured clone unchanged; none carries prompt
 * text, only chained chunk hashes.
 *
 * A prompt travels as a path: the chunk `parent` names (the deepest chunk the sender believes
 * the receiver already holds; null: none) and the `run` of hashes after it. Hashes are chained,
 * so `parent` stands for the whole prefix before it: a conversation's next turn travels as its
 * new chunks only. A receiver that does not hold `parent` cannot place the path and applies
 * the rest of the record (its load) without the claim.
 */
import type { Health, LoadReport } from "../engine-events.ts";
import type { MeasuredPrefill, RequestLoad } from "../load-board/load-board.ts";
import type { LearnedBytesPerToken } from "../router/bytes-per-token.ts";
import type { LearnedCapacity } from "../router/capacity-learner.ts";
import type { FailureKind, Outcome } from "../router/router-types.ts";
import type { LearnedSpeed } from "../router/speed-learner.ts";

/** Replica -> coordinator: one event of one request this isolate routed. */
export type UpRecord =
  /** Routed `ticket` to `origin` (the ticket's id is unique to its isolate); `outcome` when the
   * request also ended before the record was sent (one record instead of two). */
  | {
      readonly t: "route";
      readonly ticket: string;
      readonly origin: string;
      readonly parent: number | null;
      readonly run: readonly number[];
      readonly promptTokens: number;
      /** The canonical prompt's bytes, when the edge sent them (the coordinator learns from them). */
      readonly promptBytes?: number | undefined;
      readonly reason: string;
      readonly outcome?: Outcome | undefined;
      /**
       * Sent again after the coordinator restarted (a new life: its leases went with the old
       * one), for a request still running: leased, not counted as a new decision (issue 23,
       * defect C). Absent from an older replica, which never sends a route twice.
       */
      readonly again?: true | undefined;
    }
  /** The ticket's origin failed before its first byte; `next` is tried instead. */
  | {
      readonly t: "reroute";
      readonly ticket: string;
      readonly failure: FailureKind;
      readonly next: string;
    }
  /** The request ended (the engine's usage in `outcome`). */
  | { readonly t: "end"; readonly ticket: string; readonly outcome: Outcome }
  /** The ticket will not be used. */
  | { readonly t: "cancel"; readonly ticket: string };

/** Coordinator -> replicas: what an isolate's record changed in the pool's index. */
export type DownRecord =
  /** `origin` holds the path (parent, run). */
  | {
      readonly t: "claim";
      readonly origin: string;
      readonly parent: number | null;
      readonly run: readonly number[];
    }
  /**
   * `origin` never prefilled a claimed prompt: it holds the path to `parent` (what it held
   * before the claim; null: nothing of it) and neither the chunk `from` names nor anything
   * below. Naming both makes a replica that took back more (its own view of what the origin
   * held was older) agree with the coordinator.
   */
  | {
      readonly t: "drop";
      readonly origin: string;
      readonly parent: number | null;
      readonly from: number;
    }
  /** `origin`'s engine reset its cache: it holds nothing. */
  | { readonly t: "reset"; readonly origin: string };

/** A route record (the one a replica sends again after its coordinator restarted). */
export type RouteRecord = Extract<UpRecord, { t: "route" }>;

/**
 * The coordinator life an epoch names: an epoch is the object's life (drawn per start, with no
 * `.` in it), then `.<n>` once its delta log was replaced `n` times in that life. A new log
 * keeps the leases; a new life starts with none.
 */
export function lifeOf(epoch: string): string {
  const dot = epoch.indexOf(".");
  return dot < 0 ? epoch : epoch.slice(0, dot);
}

/** Where a replica's view stands: a coordinator's life (`epoch`) and a version in it. */
export interface ViewVersion {
  readonly epoch: string;
  readonly version: number;
  /**
   * The last load change the replica applied (load-changes.ts): answers and frames carry only
   * the entries changed after it. Absent from an older replica: it gets every entry.
   */
  readonly load?: number;
}

export interface SyncRequest {
  /** The isolate's id (unique per isolate start). */
  readonly isolate: string;
  /**
   * Records since the last acknowledged batch. Ids rise by one per new batch; a batch whose
   * answer was lost is sent again with the same id and records, and applied once.
   */
  readonly batch: { readonly id: number; readonly records: readonly UpRecord[] } | null;
  /** The view the replica holds; null when it has none (cold: it needs a bootstrap). */
  readonly since: ViewVersion | null;
}

/** The load some isolates put on one origin (the board's `RequestLoad`, named by origin id). */
export interface LoadShare extends Readonly<RequestLoad> {
  readonly id: string;
}

/** An engine's last load report and its age when the message left. */
export interface AgedLoadReport extends Readonly<LoadReport> {
  readonly ageMs: number;
}

/**
 * One origin's load as the pool's coordinators see it (requests every isolate routed there and
 * has not seen end, all groups), with its engine's last report.
 */
export interface OriginLoadEntry extends LoadShare {
  /** The engine's last load report and its age when the answer left; null if none. */
  readonly engine: AgedLoadReport | null;
  /** The engine's last measured prefill speed, its age when the answer left; null if none. */
  readonly measuredPrefill: MeasuredPrefill | null;
  readonly health: Health;
  /** Healthy and its circuit (at the coordinator) lets requests through. */
  readonly eligible: boolean;
  /** Its capacity as the coordinator learned it from every isolate's completions. */
  readonly capacity: LearnedCapacity;
  /**
   * Its prefill speed as the coordinator learned it (speed-learner.ts); replicas adopt it.
   * Absent from a coordinator older than the learner (a deploy rolling out): the replica keeps
   * what it read before, its last adopted value, else its prior.
   */
  readonly speed?: LearnedSpeed;
}

/** The pool's recent decisions: what a replica needs to tell how stale its view may be. */
export interface PoolRate {
  /** Decisions per second, pool-wide (exponentially weighted, half-life RATE_HALF_LIFE_MS). */
  readonly requestsPerSecond: number;
  /** Mean prefill work per decision (short-context token equivalents). */
  readonly meanPrefillWork: number;
}

/** A hot shared prefix: its chained hash, its depth in chunks and its request rate. */
export interface HotPrefixEntry {
  readonly hash: number;
  readonly depth: number;
  readonly ratePerSecond: number;
}

export interface SyncAnswer {
  readonly epoch: string;
  /** The version `records` bring the replica to (the log's, unless `more`). */
  readonly version: number;
  /**
   * The records after `version` did not fit in `edge.answerMaxBytes`: the replica syncs again
   * at once for them. Absent from an older coordinator (whose answers held every record).
   */
  readonly more?: boolean;
  /** The batch was a retry of one already applied (answered, not applied again). */
  readonly duplicate: boolean;
  /**
   * A bounded summary to start from (a router snapshot of the index's most recent chunks, with
   * each origin's slot and capacity), sent when `since` is null, from another epoch or older
   * than the coordinator's log; `records` then follow it. Null: `records` follow `since`.
   */
  readonly bootstrap: Uint8Array | null;
  /**
   * Every isolate's claims, drops and resets after `since` (or after the bootstrap), in the
   * coordinator's order, the asking isolate's own included (delta-log.ts says why).
   */
  readonly records: readonly DownRecord[];
  /**
   * The origins whose load changed after `since.load` (every origin with a bootstrap, with no
   * `since.load`, or from another epoch), with their values now; the replica keeps the rest.
   */
  readonly load: readonly OriginLoadEntry[];
  /**
   * The load change `load` brings the replica to. Absent from an older coordinator, whose
   * `load` is the whole vector.
   */
  readonly loadSeq?: number;
  /**
   * The pool's bytes per token as the coordinator learned it from every isolate's completions
   * (bytes-per-token.ts; one per pool, so beside the per-origin `load`); replicas adopt it.
   * Absent from an older coordinator, as `speed` is: the replica keeps what it read before.
   */
  readonly bytesPerToken?: LearnedBytesPerToken;
  readonly rate: PoolRate;
  readonly hot: readonly HotPrefixEntry[];
}

/**
 * Coordinator -> every isolate's socket, once a tick (push-frame.ts): the same bytes to all.
 * The records after `from` up to `version` and the load entries changed after `loadFrom` up to
 * `loadSeq`; a replica whose view is older than either (or of another epoch) has a gap and
 * syncs instead. `acks` names, per isolate, the last batch applied since the previous frame
 * (a batch sent up a socket is acknowledged here).
 */
export interface PushFrame {
  readonly epoch: string;
  readonly from: number;
  readonly version: number;
  /** Records past `version` did not fit in `edge.answerMaxBytes`: the next frame has them. */
  readonly more: boolean;
  readonly records: readonly DownRecord[];
  readonly loadFrom: number;
  readonly loadSeq: number;
  readonly load: readonly OriginLoadEntry[];
  readonly bytesPerToken: LearnedBytesPerToken;
  readonly rate: PoolRate;
  readonly hot: readonly HotPrefixEntry[];
  readonly acks: readonly (readonly [isolate: string, batch: number])[];
}

/** Coordinator -> root, every `rootIntervalMs`. */
export interface RootReport {
  readonly coordinator: string;
  /** Its isolates' share of each origin's load. */
  readonly loads: readonly LoadShare[];
  readonly rate: PoolRate;
}

/** The latest the root knows of one origin's engine (from its webhooks). */
export interface EngineState {
  readonly id: string;
  /** The last load report, numbered per origin within the root's epoch; null if none. */
  readonly load: (AgedLoadReport & { readonly seq: number }) | null;
  /** The last measured prefill speed, numbered like `load` (one sequence); null if none. */
  readonly prefillRate: {
    readonly seq: number;
    readonly tokensPerSecond: number;
    readonly tokens: number;
    readonly ageMs: number;
  } | null;
  readonly health: Health;
  /** The engine's reported KV capacity in tokens, or null. */
  readonly capacityTokens: number | null;
  /** Cache resets seen within the root's epoch (a rise tells coordinators to forget it). */
  readonly resets: number;
}

/** Root -> coordinator: the other coordinators' load and the engines' state. */
export interface RootAnswer {
  readonly epoch: string;
  /** Per origin, the sum of the other coordinators' last shares. */
  readonly others: readonly LoadShare[];
  /** The other coordinators' decisions. */
  readonly rate: PoolRate;
  readonly engines: readonly EngineState[];
}
