/**
 * llm-d: the llm-d inference scheduler's weighted scorers with a max-score picker, in its
 * precise-prefix-cache profile (llm-d/llm-d-inference-scheduler
 * deploy/config/epp-precise-prefix-cache-config.yaml; scorer READMEs under
 * pkg/epp/framework/plugins/scheduling/scorer/; scheduler_profile.go `runScorerPlugins`).
 *
 * Algorithm: every eligible origin gets
 *   prefixWeight * (matched chunks / prompt chunks)          prefix-cache scorer
 * + queueWeight  * (maxQ - q) / (maxQ - minQ), 1 if all equal  queue scorer, q = waiting requests
 * + kvWeight     * (1 - KV usage)                              kv-cache-utilization scorer
 * each score clamped to [0, 1]; the highest total wins, ties at random (llm-d shuffles, then
 * sorts). q and KV usage come from the engine's reports (llm-d scrapes every 50 ms); without a
 * report q is the router's outstanding count and KV usage 0. O(n).
 *
 * Parameters (llm-d's sample weights): prefixWeight 2, queueWeight 1, kvWeight 1; each 0..100.
 */
import { z } from "zod";
import { argmin, rankBy } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const llmDParams = z
  .object({
    type: z.literal("llm-d"),
    prefixWeight: z.number().min(0).max(100).default(2),
    queueWeight: z.number().min(0).max(100).default(1),
    kvWeight: z.number().min(0).max(100).default(1),
  })
  .strict();
export type LlmDParams = z.infer<typeof llmDParams>;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

export function createLlmD(params: LlmDParams): Policy {
  return overEligible(
    "llm-d",
    ({ origins, request, matchedTokens, tokensPerChunk, rng }, eligible) => {
      const queue = (i: number) => {
        const o = origins[i] as OriginView;
        return o.engine ? o.engine.waiting : o.outstanding;
      };
      let minQ = Number.POSITIVE_INFINITY;
      let maxQ = 0;
      for (const i of eligible) {
        minQ = Math.min(minQ, queue(i));
        maxQ = Math.max(maxQ, queue(i));
      }
      const promptChunks = Math.floor(request.promptTokens / tokensPerChunk);
      const score = (i: number) => {
        const o = origins[i] as OriginView;
        const prefix =
          promptChunks > 0 ? (matchedTokens[i] ?? 0) / tokensPerChunk / promptChunks : 0;
        const q = maxQ === minQ ? 1 : (maxQ - queue(i)) / (maxQ - minQ);
        const kv = 1 - (o.engine ? o.engine.kvUsage : 0);
        return (
          params.prefixWeight * clamp01(prefix) +
          params.queueWeight * clamp01(q) +
          params.kvWeight * clamp01(kv)
        );
      };
      const negative = (i: number) => -score(i);
      return {
        origin: argmin(eligible, negative, rng),
        reason: "max-score",
        ranking: rankBy(eligible, negative),
      };
    },
  );
}
