/**
 * @module
 * Object mode behind the coordination seam (../shared/pool-front.ts): the pool's Durable Object
 * decides (or this isolate's fallback router: route-request.ts), takes the pool's webhooks and
 * settings, and tells `/admin/state` its view.
 */
import { ingestOnObject, type PoolRef, poolStub } from "../../objects/pool-stub.ts";
import type { ObjectState } from "../../objects/rpc-types.ts";
import { answerWithin } from "../../objects/with-deadline.ts";
import type { PoolFront } from "../shared/pool-front.ts";
import { routeRequest } from "./route-request.ts";
import { routeStored } from "./route-stored.ts";

export function objectFront(env: Env, ref: PoolRef): PoolFront {
  return {
    route: (request, { ctx, waiter }) => routeRequest(env, ctx, ref, request, waiter),
    routeStored: (responseId, request) => routeStored(env, ref, responseId, request),
    ingest: (batch) => ingestOnObject(poolStub(env, ref), ref, batch),
    async pushSettings() {
      await poolStub(env, ref).applySettings(ref.model, ref.pool, ref.version);
    },
    async state(timeoutMs) {
      const asked = await answerWithin(
        () => poolStub(env, ref).state() as Promise<ObjectState | null>,
        timeoutMs,
      );
      return { object: asked.answer, objectError: asked.error };
    },
  };
}
