/**
 * Where an edge-coordinated pool's objects live: coordinator `g` of pool `model` is
 * `COORDINATOR.idFromName("<model>#<g>")`, its root `EDGE_ROOT.idFromName(model)`. Each is
 * created where its location hint says (best effort, only its first call counts): a coordinator
 * where its colo group is (colo-group.ts), or the pool's `locationHint` when the pool has one
 * coordinator; the root where the pool's hint says, else near its first caller. Stubs are made
 * per call, as for the pool's object (pool-stub.ts).
 */
import type { EngineEventBatch } from "../../core/engine-events.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { groupHint } from "./colo-group.ts";
import type { CoordinatorObject } from "./coordinator-object.ts";
import type { PoolRef } from "./pool-stub.ts";
import type { RootObject } from "./root-object.ts";
import type { IngestOutcome } from "./rpc-types.ts";
import { withSettings } from "./settings-first.ts";

export type CoordinatorStub = DurableObjectStub<CoordinatorObject>;
export type RootStub = DurableObjectStub<RootObject>;

export function coordinatorName(model: string, group: number): string {
  return `${model}#${group}`;
}

export function coordinatorStub(
  env: Env,
  model: string,
  pool: PoolSettings,
  group: number,
): CoordinatorStub {
  const ns = env.COORDINATOR;
  const id = ns.idFromName(coordinatorName(model, group));
  const hint = groupHint(group, pool.edge.coordinators, pool.locationHint);
  return hint ? ns.get(id, { locationHint: hint }) : ns.get(id);
}

export function rootStub(env: Env, model: string, pool: PoolSettings): RootStub {
  const ns = env.EDGE_ROOT;
  const id = ns.idFromName(model);
  const hint = pool.locationHint;
  return hint ? ns.get(id, { locationHint: hint }) : ns.get(id);
}

/** An engine's webhook batch for an edge pool: its root takes it (settings first if asked). */
export async function ingestOnRoot(
  env: Env,
  ref: PoolRef,
  batch: EngineEventBatch,
): Promise<IngestOutcome> {
  const stub = rootStub(env, ref.model, ref.pool);
  return withSettings(
    () => stub.ingest(batch, ref.version),
    () => stub.applySettings(ref.model, ref.pool, ref.version),
    `edge root of ${ref.model}`,
  );
}
