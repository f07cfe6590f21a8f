/**
 * The settings of a pool's degraded router (docs/architecture.md, "One request", step 4, and
 * "Scale: two coordination modes"): when the pool's Durable Object or coordinator cannot
 * answer, the Worker routes alone with a `CoreRouter` on these settings, and the simulator does
 * the same, so both run one fallback. `prefix-hash` needs no shared state to send a prefix to
 * the same origin from every isolate. It keys on the first 256 tokens *past* the prefix many
 * prompts share (`skipShared`): keyed from the start, every request behind one system prompt
 * had one key and went to one origin (the conversation trace's shared 512-token block made the
 * fallback the worst policy of all: hit 0.057, mean TTFT 184 s at 8 origins, load 0.8). The
 * index only tells it where prompts branch under a hot prefix, so it gets a small budget (the
 * default, 1M chunks, would crowd an isolate's 128 MB for nothing).
 */
import { policyOf } from "../policies/index.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";

const FALLBACK_INDEX_CHUNKS = 10_000;

export function fallbackPool(pool: PoolSettings): PoolSettings {
  return {
    ...pool,
    policy: policyOf("prefix-hash", { skipShared: true }),
    indexMaxChunks: Math.min(pool.indexMaxChunks, FALLBACK_INDEX_CHUNKS),
  };
}
