/**
 * cache-aware: SGLang's cache-aware policy, as a faithful baseline
 * (sgl-project/sglang sgl-model-gateway/src/policies/cache_aware.rs, `select_worker`).
 *
 * Algorithm, over eligible origins with load = router-local requests in flight:
 * 1. imbalanced iff max - min > balanceAbsThreshold AND max > min * balanceRelThreshold;
 *    then the least-loaded origin ("imbalanced").
 * 2. else if (longest match / prompt tokens) > cacheThreshold: the origin with the longest match
 *    ("cache-hit").
 * 3. else the least-loaded origin ("cache-miss"; SGLang's load-aware fallback, PRs #14305/#14532,
 *    replacing the older smallest-tree choice).
 * O(n). The router inserts the prompt under the chosen origin, as SGLang's tree does.
 *
 * Deviations, forced by the edge: matching is over 64-token chunk hashes, not characters, and ties
 * for the longest match go to the least-loaded of them (SGLang returns the node's last tenant).
 *
 * Parameters (SGLang's Rust defaults; its CLI uses 0.3 / 64 / 1.5):
 * - cacheThreshold: 0..1, default 0.5.
 * - balanceAbsThreshold: requests, 0..1e6, default 32.
 * - balanceRelThreshold: >= 1, default 1.1.
 */
import { z } from "zod";
import { argmin } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const cacheAwareParams = z
  .object({
    type: z.literal("cache-aware"),
    cacheThreshold: z.number().min(0).max(1).default(0.5),
    balanceAbsThreshold: z.number().min(0).max(1e6).default(32),
    balanceRelThreshold: z.number().min(1).max(1e6).default(1.1),
  })
  .strict();
export type CacheAwareParams = z.infer<typeof cacheAwareParams>;

export function createCacheAware(params: CacheAwareParams): Policy {
  return overEligible("cache-aware", ({ origins, request, matchedTokens, rng }, eligible) => {
    const load = (i: number) => (origins[i] as OriginView).outstanding;
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    let longest = 0;
    for (const i of eligible) {
      min = Math.min(min, load(i));
      max = Math.max(max, load(i));
      longest = Math.max(longest, matchedTokens[i] ?? 0);
    }
    const leastLoaded = () => argmin(eligible, load, rng);
    if (max - min > params.balanceAbsThreshold && max > min * params.balanceRelThreshold) {
      return { origin: leastLoaded(), reason: "imbalanced" };
    }
    const rate = request.promptTokens > 0 ? longest / request.promptTokens : 0;
    if (longest > 0 && rate > params.cacheThreshold) {
      const holders = eligible.filter((i) => matchedTokens[i] === longest);
      return { origin: argmin(holders, load, rng), reason: "cache-hit" };
    }
    return { origin: leastLoaded(), reason: "cache-miss" };
  });
}
