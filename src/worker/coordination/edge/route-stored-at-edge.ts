/**
 * A Responses follow-up in an edge-coordinated pool (docs/api.md, "Stored responses"): the
 * id is looked up in the pool's Durable Object, where every isolate tells where it stored
 * responses (remember-response.ts), so a follow-up that lands on another isolate, in another
 * colo group, finds its origin; then this isolate's replica checks that origin against its
 * view (its coordinator's health and circuits) and leases the request there (`routeTo`), so
 * the coordinator and the other isolates see it like any other. One call to the object before
 * the origin fetch, for follow-ups only: the price of an answer no replica can know alone.
 */
import { storedRefusal } from "../../../core/responses/stored-route.ts";
import type { RouteRequest } from "../../../core/route-request.ts";
import { type ColoProperties, coloGroup } from "../../objects/colo-group.ts";
import { type PoolRef, poolStub } from "../../objects/pool-stub.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import { refuse } from "../../stored-responses/stored-route-answer.ts";
import type { Routed } from "../shared/routed.ts";
import { type ReplicaRegistry, replicaRegistry } from "./replica-registry.ts";
import { edgeLedger } from "./route-at-edge.ts";
import { pump, syncWithin } from "./sync-loop.ts";

export async function routeStoredAtEdge(
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  ref: PoolRef,
  responseId: string,
  request: RouteRequest,
  cf: ColoProperties | undefined,
  registry: ReplicaRegistry = replicaRegistry,
): Promise<Routed> {
  const edge = registry.get(ref, coloGroup(cf, ref.pool.edge.coordinators));
  const { replica } = edge;
  const lookup = withDeadline(
    poolStub(env, ref).storedResponse(responseId, ref.pool.storedResponses),
    ref.pool.routeTimeoutMs,
  );
  // A cold replica knows no origin's health: one sync, alongside the lookup.
  const synced = replica.syncFirst(Date.now())
    ? syncWithin(edge, env, Date.now() + ref.pool.routeTimeoutMs)
    : undefined;
  const [stored] = await Promise.all([lookup.catch((error: unknown) => ({ error })), synced]);
  if (stored !== null && "error" in stored)
    refuse(ref.pool, responseId, { kind: "error", ...stored });
  const now = Date.now();
  const refusal = storedRefusal(stored, replica.loads(now));
  if (refusal !== null) refuse(ref.pool, responseId, refusal);
  // Null only for an origin the replica's settings lack, which storedRefusal calls gone.
  const decision = stored && replica.routeTo(stored.origin, request, now);
  if (!decision) refuse(ref.pool, responseId, { kind: "gone", origin: stored?.origin ?? "" });
  pump(edge, env, ctx, now);
  return {
    decision,
    ledger: edgeLedger(edge, env, ctx),
    objectMs: null,
    fallback: null,
    coordination: "edge",
    viewAgeMs: replica.viewAgeMs(now),
  };
}
