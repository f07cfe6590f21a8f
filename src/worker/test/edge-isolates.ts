/**
 * Isolates for edge-mode tests in workerd: each a `ReplicaRegistry` with the context whose
 * `waitUntil` runs its sync loop, so a test decides when the loop has settled; the pool
 * reference a route needs, read from the settings the test put; a coordinator's state, the
 * report of a request that went well, and the wait for an isolate's records to arrive.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { RouteDecision } from "../../core/router/router-types.ts";
import { type EdgePool, ReplicaRegistry } from "../coordination/edge/replica-registry.ts";
import { syncOnce } from "../coordination/edge/sync-loop.ts";
import type { CoordinatorState } from "../objects/edge-rpc-types.ts";
import type { PoolRef } from "../objects/pool-stub.ts";
import type { RequestReport } from "../request-record/request-report.ts";
import { currentSettings } from "../settings/settings-cache.ts";
import { waitFor } from "./helpers.ts";

/** The model's pool as the Worker reads it now. */
export async function ref(model: string): Promise<PoolRef> {
  const settings = await currentSettings(env);
  const pool = settings.pool(model);
  if (!pool) throw new Error(`no pool ${model}`);
  return { model, pool, version: settings.version(model) };
}

export interface Isolate {
  readonly registry: ReplicaRegistry;
  /** The context of its requests, whose `waitUntil` runs its sync loop. */
  ctx: ExecutionContext;
}

/** One isolate: its registry, and a context whose `waitUntil` the test can wait on. */
export function isolate(name: string): Isolate {
  return { registry: new ReplicaRegistry(name), ctx: createExecutionContext() };
}

/** Wait for the isolate's sync loop to end (nothing left to sync), then start a new context. */
export async function settle(iso: Isolate): Promise<void> {
  await waitOnExecutionContext(iso.ctx);
  iso.ctx = createExecutionContext();
}

/** The isolate's replica of the pool (its registry's, for the pool's current settings). */
export function edgePool(iso: Isolate, r: PoolRef): EdgePool {
  return iso.registry.get(r, 0);
}

/** A successful request's report: 500 prompt tokens, the matched ones read from cache. */
export function okReport(decision: RouteDecision): RequestReport {
  return {
    origin: decision.origin,
    outcome: "ok",
    failures: [],
    matchedTokens: decision.matchedTokens,
    promptTokens: 500,
    cachedTokens: decision.matchedTokens,
    objectMs: null,
    fallback: null,
  };
}

/** The state of the model's first coordinator; it must have settings. */
export async function coordinatorState(model: string): Promise<CoordinatorState> {
  const state = await env.COORDINATOR.getByName(`${model}#0`).state();
  if (!state) throw new Error("coordinator has no settings");
  return state;
}

/** Sync until every record `held` kept has reached the coordinator, each applied once. */
export async function recordsArrive(held: EdgePool, model: string): Promise<void> {
  await waitFor(
    async () => {
      await syncOnce(held, env);
      const applied = (await coordinatorState(model)).counters.recordsApplied;
      return held.replica.waiting.records === 0 && applied === held.replica.counters.recordsBatched;
    },
    5000,
    "the records to arrive",
  );
}
