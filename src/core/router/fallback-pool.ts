/**
 * The settings of a pool's fallback router (docs/architecture.md, "One request", step 4): when the
 * pool's Durable Object cannot answer, the Worker routes alone with a `CoreRouter` on these
 * settings, and the simulator does the same, so both run one fallback. `prefix-hash` needs no
 * shared state to send a prefix to the same origin from every isolate, and never reads the index,
 * so the index gets a small budget (the default, 1M chunks, would crowd an isolate's 128 MB for
 * nothing).
 */
import { policyOf } from "../policies/index.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";

const FALLBACK_INDEX_CHUNKS = 10_000;

export function fallbackPool(pool: PoolSettings): PoolSettings {
  return {
    ...pool,
    policy: policyOf("prefix-hash"),
    indexMaxChunks: Math.min(pool.indexMaxChunks, FALLBACK_INDEX_CHUNKS),
  };
}
