/**
 * llm-d-precise: llm-d's precise-prefix-cache profile, the precise prefix scorer on the engines'
 * own block caches (upstream reads vLLM's KV events through llm-d-kv-cache) beside the queue and
 * KV-utilisation scorers of `llm-d`. Run it on a pool with `indexFeed: "engine-events"` (the
 * simulator does); on the router's own index it scores that index instead.
 * Sources, llm-d/llm-d-inference-scheduler @520af478 (2026-05-17):
 * deploy/config/epp-precise-prefix-cache-config.yaml (the profile: decode-filter, precise prefix
 * 2.0, kv-cache-utilization 1.0, queue 1.0, max-score-picker; blockSize 64, speculative indexing
 * off), pkg/epp/framework/plugins/scheduling/scorer/preciseprefixcache/precise_prefix_cache.go
 * (`Score`, `getScores`) and utils.go (`absoluteScoredPods`); the matcher is llm-d-kv-cache's
 * `LongestPrefixScorer` (consecutive blocks from block 0, GPU tier weight 1.0). The llm-d guide
 * (llm-d/llm-d guides/precise-prefix-cache-aware/scheduler/precise-prefix-cache-aware.values.yaml
 * @019a3f3f) deploys the same profile and weights.
 *
 * Precise prefix score, per eligible origin, from m = its longest cached prefix in blocks and
 * B = the prompt's whole blocks (floor(tokens / block); the trailing partial block is dropped):
 *   min(1, m / B), 0 without a hit or without a whole block.
 * Then prefixWeight * prefix + queueWeight * queue + kvWeight * (1 - KV usage), max score wins,
 * ties at random (`createLlmDScorers`). O(n).
 *
 * Why not min-max: up to llm-d's release v0.8.0 (and its guide's image v0.8.0-rc.1) the scorer
 * min-max normalised over the origins with a hit (1 when they tie). That gives a lone one-block
 * hit, such as a system prompt every request shares, the full score, so the origins that cached
 * it first out-score every idle one until their KV is full: on the conversation trace at 16
 * origins it sent all traffic to 4 of them. Upstream replaced it with this absolute form in PR
 * #1107 (commit e6f6b84f, "small absolute hits were amplified to 1.0 when best-in-set"), so the
 * baseline is the scorer as upstream now ships it.
 *
 * Not modelled: the scorer's optional speculative entries (TTL 2 s), off by default; CPU-tier
 * hits (no CPU offload in the simulator).
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

/** Longest cached prefix over the prompt's whole blocks (`absoluteScoredPods`); 0 without one. */
const precisePrefix: PrefixScorer = ({ request, matchedTokens, tokensPerChunk }) => {
  const blocks = Math.floor(request.promptTokens / tokensPerChunk);
  return (i) => (blocks > 0 ? Math.floor((matchedTokens[i] ?? 0) / tokensPerChunk) / blocks : 0);
};

export function createLlmDPrecise(params: LlmDPreciseParams): Policy {
  return createLlmDScorers("llm-d-precise", params, precisePrefix);
}
