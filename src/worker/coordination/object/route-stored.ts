/**
 * The decision for a Responses request that continues a stored response (`previous_response_id`;
 * docs/api.md, "Stored responses"): the origin that stored it, with no policy choice and no
 * failover, or the error that says why not (stored-response-errors.ts).
 *
 * Object pools ask their Durable Object in one call (`routeStored`): it looks the id up and
 * leases the request there (core/responses/stored-route.ts). There is no fallback: an object
 * that does not answer within `routeTimeoutMs` leaves the router not knowing where the
 * response lives, and any other origin would answer the engine's own 404, so the client gets a
 * 503 to retry. Edge pools look the id up in the same object and lease the request in this
 * isolate's replica (../edge/route-stored-at-edge.ts). The pool's front picks one
 * (../front.ts, `routeStored`).
 */
import type { RouteRequest } from "../../../core/route-request.ts";
import { onObject, type PoolRef, poolStub } from "../../objects/pool-stub.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import { routedOrThrow } from "../../stored-responses/stored-route-answer.ts";
import type { Routed } from "../shared/routed.ts";
import { objectLedger } from "./route-request.ts";

export async function routeStored(
  env: Env,
  ref: PoolRef,
  responseId: string,
  request: RouteRequest,
): Promise<Routed> {
  const stub = poolStub(env, ref);
  const askedAt = Date.now();
  const call = { ...request, responseId, version: ref.version };
  const answer = await withDeadline(
    onObject(stub, ref, () => stub.routeStored(call) as Promise<unknown>),
    ref.pool.routeTimeoutMs,
  ).catch((error: unknown) => ({ kind: "error" as const, error }));
  const decision = routedOrThrow(ref.pool, responseId, answer);
  return {
    decision,
    ledger: objectLedger(stub, ref.model),
    objectMs: Date.now() - askedAt,
    fallback: null,
    coordination: "object",
    viewAgeMs: null,
  };
}
