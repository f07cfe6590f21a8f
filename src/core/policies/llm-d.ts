/**
 * llm-d: the llm-d inference scheduler's weighted scorers and max-score picker, with the
 * approximate prefix-cache scorer (on the router's own index) under the weights of llm-d's
 * precise-prefix-cache profile. `llm-d-precise` is the same with the precise scorer on the
 * engines' KV events.
 * Sources: llm-d/llm-d-inference-scheduler deploy/config/epp-precise-prefix-cache-config.yaml
 * (weights) @17abea8a; the approximate scorer's README under
 * pkg/epp/framework/plugins/scheduling/scorer/ and its producer
 * pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix/ @520af47; GIE's
 * scorer/queue.go and scorer/kvcache_utilization.go @02308be3; scheduler_profile.go
 * `runScorerPlugins`.
 *
 * Algorithm: every eligible origin gets
 *   prefixWeight * (matched chunks / prompt chunks)          approximate prefix-cache scorer
 * + queueWeight  * (maxQ - q) / (maxQ - minQ), 1 if all equal  queue scorer, q = waiting requests
 * + kvWeight     * (1 - KV usage)                              kv-cache-utilization scorer
 * each score clamped to [0, 1]; the highest total wins, ties at random (llm-d shuffles, then
 * sorts). q and KV usage come from the engines' metrics, which llm-d scrapes every 50 ms (the
 * simulator's information model gives it that); without a report q is the router's outstanding
 * count and KV usage 0. O(n).
 *
 * This pairing is not one of llm-d's sample profiles: its approximate profiles weigh the
 * approximate scorer alone (epp-config.yaml, prefix 2) or with the load-aware scorer; the
 * precise profile's queue and KV scorers are kept here because they make it stronger.
 *
 * Parameters (the precise profile's weights): prefixWeight 2, queueWeight 1, kvWeight 1; each
 * 0..100.
 */
import { z } from "zod";
import { argmin, rankBy } from "./pick.ts";
import { type OriginView, overEligible, type Policy, type PolicyContext } from "./policy.ts";

/** The scorers' weights, shared with `llm-d-precise`. */
export const llmDWeights = {
  prefixWeight: z.number().min(0).max(100).default(2),
  queueWeight: z.number().min(0).max(100).default(1),
  kvWeight: z.number().min(0).max(100).default(1),
};

export const llmDParams = z.object({ type: z.literal("llm-d"), ...llmDWeights }).strict();
export type LlmDParams = z.infer<typeof llmDParams>;

type Weights = { prefixWeight: number; queueWeight: number; kvWeight: number };
/** A prefix scorer: origin index -> score in [0, 1], prepared once per request. */
export type PrefixScorer = (
  context: PolicyContext,
  eligible: readonly number[],
) => (i: number) => number;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** llm-d's scorers with `prefix` as the prefix scorer, summed with weights; max score wins. */
export function createLlmDScorers(name: string, params: Weights, prefix: PrefixScorer): Policy {
  return overEligible(name, (context, eligible) => {
    const { origins, rng } = context;
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
    const prefixScore = prefix(context, eligible);
    const score = (i: number) => {
      const o = origins[i] as OriginView;
      const q = maxQ === minQ ? 1 : (maxQ - queue(i)) / (maxQ - minQ);
      const kv = 1 - (o.engine ? o.engine.kvUsage : 0);
      return (
        params.prefixWeight * clamp01(prefixScore(i)) +
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
  });
}

/** GIE's approximate prefix-cache scorer: matched blocks / prompt blocks. */
const approximatePrefix: PrefixScorer = ({ request, matchedTokens, tokensPerChunk }) => {
  const promptChunks = Math.floor(request.promptTokens / tokensPerChunk);
  return (i) => (promptChunks > 0 ? (matchedTokens[i] ?? 0) / tokensPerChunk / promptChunks : 0);
};

export function createLlmD(params: LlmDParams): Policy {
  return createLlmDScorers("llm-d", params, approximatePrefix);
}
