/**
 * @module
 * The seam between the Worker and a pool's coordination mode (../front.ts picks one per pool):
 * every mode-specific thing the routes do, as one interface. The simulator's `PoolFront`
 * (sim/fleet/routing-front.ts) is the same seam around the routing core, and its methods
 * read alike: `route` a request, `ingest` an engine's events. It lives here, beside the shapes
 * it returns, because the modes implement it and front.ts imports the modes.
 */
import type { AdmissionStats } from "../../../core/admission/admission.ts";
import type { ReplicaCounters } from "../../../core/edge/replica-sync.ts";
import type { EngineEventBatch } from "../../../core/engine-events.ts";
import type { RouteRequest } from "../../../core/route-request.ts";
import type { ColoProperties } from "../../objects/colo-group.ts";
import type { CoordinatorState } from "../../objects/edge-rpc-types.ts";
import type { IngestOutcome, ObjectState } from "../../objects/rpc-types.ts";
import type { Routed, Waiter } from "./routed.ts";

export interface RouteOptions {
  readonly ctx: Pick<ExecutionContext, "waitUntil">;
  /** Present when the request may wait in admission: its client's abort signal. */
  readonly waiter?: Waiter;
  /** The request's `cf` properties, which name an edge isolate's colo group (absent locally). */
  readonly cf?: ColoProperties | undefined;
}

/** An edge pool's isolate replica, for `/admin/state`. */
export interface ReplicaState {
  isolate: string;
  group: number;
  degraded: boolean;
  viewAgeMs: number | null;
  waiting: { records: number; dropped: number };
  counters: ReplicaCounters;
  /** This isolate's admission for the pool: waiting, admitted, shed, left. */
  admission: AdmissionStats;
}

/** What `/admin/state` shows of a pool's coordination (observability/pool-state.ts). */
export interface CoordinationState {
  /** The pool's object's view; an edge pool's: its first coordinator that has state. */
  readonly object: ObjectState | null;
  /** Why the objects' state is missing (`DeadlineError`, ...), else null. */
  readonly objectError: string | null;
  /** Edge pools only. */
  readonly edge?: {
    /** Every coordinator's state (by colo group; null: it has seen no sync yet). */
    readonly coordinators: (CoordinatorState | null)[];
    /** This isolate's replica, if it has routed for the pool. */
    readonly replica: ReplicaState | null;
  };
}

/** One pool's coordination, as the Worker's routes use it. */
export interface PoolFront {
  /** One routing decision for a request, and the ledger its failover and end report to. */
  route(request: RouteRequest, options: RouteOptions): Promise<Routed>;
  /**
   * A Responses follow-up: the decision that sends it to the origin that stored
   * `responseId`, or the error that says why not (stored-responses/).
   */
  routeStored(responseId: string, request: RouteRequest, options: RouteOptions): Promise<Routed>;
  /** An engine's webhook batch, applied by whichever object takes the pool's webhooks. */
  ingest(batch: EngineEventBatch): Promise<IngestOutcome>;
  /** The pool's objects take its settings now (they would on their next call otherwise). */
  pushSettings(): Promise<void>;
  /** The pool's coordination state, each object asked within `timeoutMs`. */
  state(timeoutMs: number): Promise<CoordinationState>;
}
