/**
 * hybrid: prefix-hash stickiness with threshold overflow. A request goes to its prefix's
 * rendezvous origin unless that origin is loaded past a threshold, in which case it overflows to
 * the least-loaded origin. The threshold grows with what staying is worth: the prefill tokens the
 * target already holds for this request. A short or uncached prompt overflows cheaply; a 4,096+
 * token cached context stays unless the target is far behind.
 *
 * Algorithm: target = first rendezvous origin of the prefix key; overflow iff
 *   outstanding(target) - min outstanding > overflowBase + overflowPer1kTokens * matched(target)/1000.
 * O(n log n) per request for the order.
 *
 * Parameters:
 * - prefixTokens: 16..131072, default 256, as in prefix-hash.
 * - overflowBase: requests of imbalance tolerated for an uncached prompt, 0..1000, default 2.
 * - overflowPer1kTokens: extra requests tolerated per 1,000 cached tokens on the target,
 *   0..1000, default 2 (a 4,096-token cached context tolerates about 10).
 */
import { z } from "zod";
import { argmin } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";
import { prefixKey, rendezvousOrder } from "./rendezvous.ts";

export const hybridParams = z
  .object({
    type: z.literal("hybrid"),
    prefixTokens: z.number().int().min(16).max(131072).default(256),
    overflowBase: z.number().min(0).max(1000).default(2),
    overflowPer1kTokens: z.number().min(0).max(1000).default(2),
  })
  .strict();
export type HybridParams = z.infer<typeof hybridParams>;

export function createHybrid(params: HybridParams): Policy {
  return overEligible(
    "hybrid",
    ({ origins, request, matchedTokens, tokensPerChunk, rng }, eligible) => {
      const load = (i: number) => (origins[i] as OriginView).outstanding;
      const leastLoaded = argmin(eligible, load, rng);
      const prefixChunks = Math.max(1, Math.round(params.prefixTokens / tokensPerChunk));
      const key = prefixKey(request.chunkHashes, prefixChunks, request.sessionKey);
      if (key === null) return { origin: leastLoaded, reason: "no-prefix" };
      const ranking = rendezvousOrder(key, eligible, (i) => origins[i] as OriginView);
      const target = ranking[0] as number;
      const threshold =
        params.overflowBase + (params.overflowPer1kTokens * (matchedTokens[target] ?? 0)) / 1000;
      if (load(target) - load(leastLoaded) > threshold) {
        return { origin: leastLoaded, reason: "overflow", ranking };
      }
      return { origin: target, reason: "sticky", ranking };
    },
  );
}
