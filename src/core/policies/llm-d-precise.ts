/**
 * llm-d-precise: llm-d's precise-prefix-cache profile (llm-d/llm-d-inference-scheduler
 * deploy/config/epp-precise-prefix-cache-config.yaml and pkg/plugins/scorer/precise_prefix_cache.go
 * @17abea8a; queue and KV scorers as in `llm-d`, GIE @02308be3): the precise prefix scorer on
 * the engines' own block caches, which upstream reads from vLLM's KV events through
 * llm-d-kv-cache. Run it on a pool with `indexFeed: "engine-events"` (the simulator does); on the
 * router's own index it scores that index instead.
 *
 * Precise prefix score, per eligible origin, from m = its longest cached prefix (in blocks):
 *   0 without a hit (m = 0); else (m - min) / (max - min) over the origins with a hit, and 1 when
 *   those are all equal (one origin with a hit scores 1).
 * Then prefixWeight * prefix + queueWeight * queue + kvWeight * (1 - KV usage), max score wins,
 * ties at random (`createLlmDScorers`). O(n).
 *
 * Not modelled: the scorer's optional speculative entries (TTL 2 s), which are off by default;
 * CPU-tier hits (no CPU offload in the simulator).
 *
 * Parameters (the profile's weights): prefixWeight 2, queueWeight 1, kvWeight 1; each 0..100.
 */
import { z } from "zod";
import { createLlmDScorers, llmDWeights, type PrefixScorer } from "./llm-d.ts";
import type { Policy } from "./policy.ts";

export const llmDPreciseParams = z
  .object({ type: z.literal("llm-d-precise"), ...llmDWeights })
  .strict();
export type LlmDPreciseParams = z.infer<typeof llmDPreciseParams>;

/** Min-max of the longest cached prefix over the origins with any hit; 0 without one. */
const precisePrefix: PrefixScorer = ({ matchedTokens }, eligible) => {
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const i of eligible) {
    const m = matchedTokens[i] ?? 0;
    if (m === 0) continue;
    min = Math.min(min, m);
    max = Math.max(max, m);
  }
  return (i) => {
    const m = matchedTokens[i] ?? 0;
    if (m === 0) return 0;
    return max === min ? 1 : (m - min) / (max - min);
  };
};

export function createLlmDPrecise(params: LlmDPreciseParams): Policy {
  return createLlmDScorers("llm-d-precise", params, precisePrefix);
}
