/**
 * @module
 * One routing decision in an edge-coordinated pool (docs/architecture.md, "The Worker's edge
 * path"): this isolate's replica decides at once, with no call before the origin fetch (but
 * for an isolate's first request, which waits for the pool's summary: a cold replica knows
 * nothing, and would send a conversation away from its cache; and for the first request after
 * the isolate idled past `warmMs`, whose view is too old to route on), and the request's records (its
 * route, failovers, end or cancel) queue for the next sync, which `pump` makes sure a live
 * request's `waitUntil` will send. The `Ledger` it returns is what
 * forward/ reports to, as with the pool's object: failover and the end land in the replica,
 * and the end's report waits to ride with the batch that carries the end record.
 */
import type { RouteRequest } from "../../core/router/router-types.ts";
import { type ColoProperties, coloGroup } from "../coordinator-object/colo-group.ts";
import type { PoolRef } from "../edge-routing/pool-stub.ts";
import type { Ledger, Routed } from "../edge-routing/route-request.ts";
import { routerOutcome } from "../request-record/request-report.ts";
import { type EdgePool, type ReplicaRegistry, replicaRegistry } from "./replica-registry.ts";
import { pump, syncOnce } from "./sync-loop.ts";

export interface EdgeRouteOptions {
  /** The request's `cf` properties, which name its colo's group (absent in local runs). */
  readonly cf?: ColoProperties | undefined;
  /** This isolate's replicas (tests pass their own to stand for other isolates). */
  readonly registry?: ReplicaRegistry;
}

type Ctx = Pick<ExecutionContext, "waitUntil">;

export async function routeAtEdge(
  env: Env,
  ctx: Ctx,
  ref: PoolRef,
  request: RouteRequest,
  options: EdgeRouteOptions = {},
): Promise<Routed> {
  const registry = options.registry ?? replicaRegistry;
  const pool = registry.get(ref, coloGroup(options.cf, ref.pool.edge.coordinators));
  const { replica } = pool;
  // Cold, or idle past warmMs with a view too old to route on (and the last sync answered):
  // one sync first, bounded by the pool's routeTimeoutMs (EdgeReplica.syncFirst).
  if (replica.syncFirst(Date.now())) await syncOnce(pool, env);
  const now = Date.now();
  const decision = replica.route(request, now);
  pump(pool, env, ctx, now);
  return {
    decision,
    ledger: edgeLedger(pool, env, ctx),
    objectMs: null,
    fallback: null,
    coordination: "edge",
    viewAgeMs: replica.viewAgeMs(now),
  };
}

function edgeLedger(pool: EdgePool, env: Env, ctx: Ctx): Ledger {
  const { replica } = pool;
  const then = <T>(result: T): Promise<T> => {
    pump(pool, env, ctx, Date.now());
    return Promise.resolve(result);
  };
  return {
    reroute: (ticket, failure, next) => then(replica.reroute(ticket, failure, next, Date.now())),
    // Edge pools have no prefill origins (edge-settings.ts refuses them): nothing to fail.
    prefillFailed: async () => null,
    complete: (ticket, report) => {
      replica.complete(ticket, routerOutcome(report), Date.now());
      pool.reports.add(report);
      return then(undefined);
    },
    cancel: (ticket) => {
      replica.cancel(ticket, Date.now());
      return then(undefined);
    },
  };
}
