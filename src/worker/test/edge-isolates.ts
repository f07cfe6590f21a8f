/**
 * Isolates for edge-mode tests in workerd: each a `ReplicaRegistry` with the context whose
 * `waitUntil` runs its sync loop, so a test decides when the loop has settled; and the pool
 * reference a route needs, read from the settings the test put.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { ReplicaRegistry } from "../coordination/edge/replica-registry.ts";
import type { PoolRef } from "../objects/pool-stub.ts";
import { currentSettings } from "../settings/settings-cache.ts";

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
