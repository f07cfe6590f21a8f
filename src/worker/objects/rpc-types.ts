/**
 * The Durable Object's RPC contract beyond the core's own types: the settings version a call
 * carries (settings/pool-version.ts), what became of a webhook batch, and the object's state.
 * The end of a request travels as its `RequestReport` (request-record/request-report.ts).
 */
import type { AdmissionStats } from "../../core/admission/admission.ts";
import type { Shed } from "../../core/admission/shed.ts";
import type { RouteRequest } from "../../core/route-request.ts";
import type { RouteDecision, RouterStats } from "../../core/router/router-types.ts";
import type { PoolMetricsSnapshot } from "../pool-metrics/pool-metrics.ts";
import type { PoolVersion } from "../settings/pool-version.ts";

export interface RouteCall extends RouteRequest {
  readonly version: PoolVersion;
}

/** A Responses request naming `responseId` as its `previous_response_id`: pinned to its origin. */
export interface StoredRouteCall extends RouteCall {
  readonly responseId: string;
}

/** A request offered to the pool's admission: `id` names it while it waits (for `leave`). */
export interface AdmitCall extends RouteCall {
  readonly id: string;
}

/**
 * What admission made of a request (src/core/admission): routed (after `waitedMs` in the
 * object's queue), shed, or gone (its client left while it waited: `leave`).
 */
export type Admitted =
  | { readonly kind: "routed"; readonly decision: RouteDecision; readonly waitedMs: number }
  | { readonly kind: "shed"; readonly shed: Shed }
  | { readonly kind: "left" };

/**
 * What the object did with a webhook batch: applied it; had applied it before (`duplicate`);
 * refused it as made before the origin's last applied batch or before the window (`stale`), or
 * as made more than the allowed skew ahead of the object's clock (`ahead`); or does not list
 * the origin in its settings.
 */
export interface IngestOutcome {
  readonly verdict: "applied" | "duplicate" | "stale" | "ahead" | "unknown-origin";
  /** With `stale`: when the origin's last applied batch was made (its `at`), if known. */
  readonly lastAt?: number | null;
}

/** The object's view of its pool, for `/admin/state`, `/metrics` and the dashboard. */
export interface ObjectState {
  model: string;
  version: PoolVersion;
  router: RouterStats;
  metrics: PoolMetricsSnapshot;
  /** Object mode: the pool's admission (waiting, admitted, shed, left); edge pools' is per isolate. */
  admission?: AdmissionStats;
  snapshotRows: number;
}
