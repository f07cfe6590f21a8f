/**
 * cost (ours, the default): send the request where it will see its first token soonest, and
 * charge for the locality a move throws away.
 *
 * For each eligible origin o, with S_o its prefill speed (tokens/s) and m_o the prompt tokens it
 * holds:
 *   slow_o  = 1 + decodeSlowdown * outstanding_o      decode steps share the GPU with prefill
 *   ttft_o  = (queued_o + prompt - m_o) * slow_o / S_o  wait for its queue, then our own prefill
 *   price_o = affinityPrice * (m_best - m_o) / S_o      the cached prefix a move leaves behind
 * and the lowest ttft_o + price_o wins; ties go to the longer match, then the fewer outstanding,
 * then at random. O(n).
 *
 * Why the price: a greedy TTFT minimiser moves a conversation to an idle origin to save a few
 * milliseconds, splitting its cache for every later turn and filling a second origin with a copy.
 * Charging a fraction of the abandoned prefix's recompute time adds hysteresis: a prefix is
 * copied to a second origin ("replicate") only when its holder's queue costs more than
 * (1 + affinityPrice) times recomputing it elsewhere, which is when the prefix is truly hot.
 * queued_o is the router's own fluid estimate of the prefill work still ahead at o (every routed
 * request adds its uncached tokens; it drains at S_o), which needs no engine report and is never
 * late.
 *
 * Parameters:
 * - affinityPrice: 0..10, default 0.5 (0 = greedy TTFT).
 * - decodeSlowdown: prefill slowdown per request in flight, 0..1, default 0.02.
 */
import { z } from "zod";
import { type Compare, pickMin, rankWith } from "./pick.ts";
import {
  type Decision,
  eligibleIndexes,
  NO_ELIGIBLE_ORIGIN,
  type OriginView,
  type Policy,
  type PolicyContext,
} from "./policy.ts";

export const costParams = z
  .object({
    type: z.literal("cost"),
    affinityPrice: z.number().min(0).max(10).default(0.5),
    decodeSlowdown: z.number().min(0).max(1).default(0.02),
  })
  .strict();
export type CostParams = z.infer<typeof costParams>;

export function createCost(params: CostParams): Policy {
  return {
    name: "cost",
    decide({ origins, request, matchedTokens, rng }: PolicyContext): Decision {
      const eligible = eligibleIndexes(origins);
      if (eligible.length === 0) return NO_ELIGIBLE_ORIGIN;
      let best = 0;
      for (const i of eligible) best = Math.max(best, matchedTokens[i] ?? 0);
      const score = new Float64Array(origins.length);
      for (const i of eligible) {
        const o = origins[i] as OriginView;
        const matched = matchedTokens[i] ?? 0;
        const slow = 1 + params.decodeSlowdown * o.outstanding;
        const ttft = (o.queuedPrefillTokens + request.promptTokens - matched) * slow;
        const price = params.affinityPrice * (best - matched);
        score[i] = (ttft + price) / o.prefillTokensPerSecond;
      }
      // Lower score, then the longer match, then fewer requests in flight; then at random.
      const compare: Compare = (a, b) =>
        (score[a] as number) - (score[b] as number) ||
        (matchedTokens[b] ?? 0) - (matchedTokens[a] ?? 0) ||
        (origins[a] as OriginView).outstanding - (origins[b] as OriginView).outstanding;
      const origin = pickMin(eligible, compare, rng);
      const matched = matchedTokens[origin] ?? 0;
      const reason = best === 0 ? "least-ttft" : matched === best ? "cache-hit" : "replicate";
      return { origin, reason, ranking: rankWith(eligible, compare) };
    },
  };
}
