/**
 * Calls to a pool's Durable Object that bring it the caller's settings on demand
 * (settings-first.ts). Stubs are made per call: Cloudflare's guidance is a new stub after any
 * exception, and making one is cheap (no I/O until it is called).
 */
import type { EngineEventBatch } from "../../core/engine-events.ts";
import type { RouteRequest } from "../../core/route-request.ts";
import type { RouteDecision } from "../../core/router/router-types.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import type { PoolVersion } from "../settings/pool-version.ts";
import type { RouterObject } from "./router-object.ts";
import type { Admitted, IngestOutcome } from "./rpc-types.ts";
import { withSettings } from "./settings-first.ts";

export type PoolStub = DurableObjectStub<RouterObject>;

export interface PoolRef {
  readonly model: string;
  readonly pool: PoolSettings;
  readonly version: PoolVersion;
}

/** The pool's object; a location hint only matters on the very first call that creates it. */
export function poolStub(env: Env, ref: PoolRef): PoolStub {
  const id = env.ROUTER.idFromName(ref.model);
  const hint = ref.pool.locationHint;
  return hint ? env.ROUTER.get(id, { locationHint: hint }) : env.ROUTER.get(id);
}

/** `call` on the pool's object, bringing it the caller's settings first if it asks for them. */
export function onObject<T>(
  stub: PoolStub,
  ref: PoolRef,
  call: () => Promise<T | null>,
): Promise<T> {
  const push = () => stub.applySettings(ref.model, ref.pool, ref.version);
  return withSettings(call, push, `router object for ${ref.model}`);
}

export function routeOnObject(
  stub: PoolStub,
  ref: PoolRef,
  request: RouteRequest,
): Promise<RouteDecision> {
  return onObject(stub, ref, () => stub.route({ ...request, version: ref.version }));
}

/** The request offered to the pool's admission under `id` (its place in the queue). */
export function admitOnObject(
  stub: PoolStub,
  ref: PoolRef,
  id: string,
  request: RouteRequest,
): Promise<Admitted> {
  // RPC's typing of a union answer (each member made Disposable) does not narrow back to it.
  const admit = () => stub.admit({ ...request, id, version: ref.version }) as Promise<unknown>;
  return onObject(stub, ref, () => admit() as Promise<Admitted | null>);
}

export function ingestOnObject(
  stub: PoolStub,
  ref: PoolRef,
  batch: EngineEventBatch,
): Promise<IngestOutcome> {
  return onObject(stub, ref, () => stub.ingest(batch, ref.version));
}
