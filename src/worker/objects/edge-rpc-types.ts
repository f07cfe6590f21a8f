/**
 * The RPC contract of edge coordination's Durable Objects beyond the core's messages
 * (src/core/edge/sync-protocol.ts): what a replica's sync carries (its settings version and
 * the reports of the requests its batch ends, for the pool's metrics), and what the
 * coordinator and the root tell `/admin/state`.
 */
import type { CoordinatorCounters } from "../../core/edge/edge-coordinator.ts";
import type { IsolateCount } from "../../core/edge/isolate-census.ts";
import type { SyncRequest } from "../../core/edge/sync-protocol.ts";
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

/** A coordinator's view of its group, for `/admin/state` (merged across groups there). */
export interface CoordinatorState extends ObjectState {
  readonly group: number;
  /** This coordinator's life: replicas holding a view of another epoch get a bootstrap. */
  readonly epoch: string;
  /** Records logged in this epoch (the version replicas sync from). */
  readonly logVersion: number;
  readonly counters: CoordinatorCounters;
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
