/**
 * @module
 * Edge mode behind the coordination seam (../shared/pool-front.ts): this isolate's replica
 * decides (route-at-edge.ts), the pool's root takes its webhooks, its root and every colo
 * group's coordinator take its settings, and `/admin/state` shows every coordinator's view and
 * this isolate's replica.
 */
import { coordinatorStub, ingestOnRoot, rootStub } from "../../objects/edge-stubs.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import { answerWithin } from "../../objects/with-deadline.ts";
import type { PoolFront, ReplicaState } from "../shared/pool-front.ts";
import { replicaRegistry } from "./replica-registry.ts";
import { routeAtEdge } from "./route-at-edge.ts";
import { routeStoredAtEdge } from "./route-stored-at-edge.ts";

export function edgeFront(env: Env, ref: PoolRef): PoolFront {
  const { model, pool, version } = ref;
  const groups = Array.from({ length: pool.edge.coordinators }, (_, g) => g);
  return {
    route: (request, { ctx, cf, waiter }) =>
      routeAtEdge(env, ctx, ref, request, { cf, ...(waiter ? { waiter } : {}) }),
    routeStored: (responseId, request, { ctx, cf }) =>
      routeStoredAtEdge(env, ctx, ref, responseId, request, cf),
    ingest: (batch) => ingestOnRoot(env, ref, batch),
    async pushSettings() {
      await Promise.all([
        rootStub(env, model, pool).applySettings(model, pool, version),
        ...groups.map((g) =>
          coordinatorStub(env, model, pool, g).applySettings(model, pool, version, g),
        ),
      ]);
    },
    async state(timeoutMs) {
      const asked = await answerWithin(
        () => Promise.all(groups.map((g) => coordinatorStub(env, model, pool, g).state())),
        timeoutMs,
      );
      const coordinators = asked.answer ?? [];
      return {
        object: coordinators.find((c) => c !== null) ?? null,
        objectError: asked.error,
        edge: { coordinators, replica: replicaState(model, Date.now()) },
      };
    },
  };
}

function replicaState(model: string, now: number): ReplicaState | null {
  const held = replicaRegistry.peek(model);
  if (!held) return null;
  const { replica } = held;
  return {
    isolate: replica.isolate,
    group: held.group,
    degraded: replica.degraded,
    viewAgeMs: replica.viewAgeMs(now),
    waiting: replica.waiting,
    counters: { ...replica.counters },
    admission: held.admission.stats(now),
  };
}
