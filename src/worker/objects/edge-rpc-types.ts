/**
 * The RPC contract of edge coordination's Durable Objects beyond the core's messages
 * (src/core/edge/sync-protocol.ts): what a replica's sync carries (its settings version and
 * the reports of the requests its batch ends, for the pool's metrics), and what the
 * coordinator and the root tell `/admin/state`.
 */
import type { CoordinatorCounters } from "../../core/edge/edge-coordinator.ts";
import type { IsolateCount } from "../../core/edge/isolate-census.ts";
import type { SyncRequest, ViewVersion } from "../../core/edge/sync-protocol.ts";
import type { RequestReport } from "../request-record/request-report.ts";
import type { PoolVersion } from "../settings/pool-version.ts";
import type { ObjectState } from "./rpc-types.ts";

export interface SyncCall {
  readonly version: PoolVersion;
  readonly request: SyncRequest;
  /**
   * The reports of the requests this batch ends, sent again with the batch when its answer
   * was lost, and counted with it: once.
   */
  readonly reports: readonly RequestReport[];
}

/**
 * What an isolate sends up its socket (JSON text): a batch of records, as a sync's, with the
 * settings version it was made under and the reports it ends. Acknowledged in a later frame.
 */
export interface PushUpload {
  readonly t: "batch";
  readonly version: PoolVersion;
  readonly isolate: string;
  readonly batch: NonNullable<SyncRequest["batch"]>;
  readonly reports: readonly RequestReport[];
}

/** The query of a socket's upgrade request: who opens it, and the view it holds. */
export function pushQuery(isolate: string, since: ViewVersion): string {
  const q = new URLSearchParams({ isolate, since: JSON.stringify(since) });
  return `https://coordinator/push?${q}`;
}

/** A socket's upgrade request's isolate and view; null when malformed. */
export function parsePushQuery(url: string): { isolate: string; since: ViewVersion | null } | null {
  const q = new URL(url).searchParams;
  const isolate = q.get("isolate");
  if (!isolate) return null;
  try {
    const since = JSON.parse(q.get("since") ?? "null") as ViewVersion | null;
    const ok =
      since !== null &&
      typeof since.epoch === "string" &&
      Number.isInteger(since.version) &&
      (since.load === undefined || Number.isInteger(since.load));
    return { isolate, since: ok ? since : null };
  } catch {
    return { isolate, since: null };
  }
}

/** A coordinator's view of its group, for `/admin/state` (merged across groups there). */
export interface CoordinatorState extends ObjectState {
  readonly group: number;
  /** This coordinator's life: replicas holding a view of another epoch get a bootstrap. */
  readonly epoch: string;
  /** Records logged in this epoch (the version replicas sync from). */
  readonly logVersion: number;
  readonly counters: CoordinatorCounters;
  /** Push sockets open now. */
  readonly sockets: number;
  /**
   * Distinct isolates that synced with this coordinator (HyperLogLog, 3.25% standard error):
   * what edge mode's bill scales with (docs/architecture.md, "Cost model").
   */
  readonly isolates: IsolateCount;
  /** The root's last answer, ms ago; null before the first. */
  readonly rootAgeMs: number | null;
}

/** The root's view, for `/admin/state`. */
export interface RootState {
  readonly model: string;
  readonly version: PoolVersion;
  readonly epoch: string;
}
