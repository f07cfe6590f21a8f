/**
 * prefix-hash: sticky routing by the request's prefix with rendezvous hashing, optionally with
 * bounded loads (consistent hashing with bounded loads, Mirrokni et al. 2018; SGLang's
 * `prefix_hash` with `load_factor`).
 *
 * Algorithm: key = chained hash of the first `prefixTokens` (or the session key when given);
 * order the eligible origins by rendezvous score; without a bound take the first; with a bound
 * take the first whose outstanding requests are below
 * ceil(boundedLoad * (total outstanding + 1) / eligible * weight / mean weight).
 * A prompt shorter than one chunk has no key and goes to the least-outstanding origin.
 * O(n log n) per request for the order.
 *
 * Parameters:
 * - prefixTokens: tokens of prefix that form the key, 16..131072, default 256 (SGLang's
 *   prefix_token_count). Short keys group more requests (more locality, hotter spots).
 * - boundedLoad: load factor >= 1, or null for pure rendezvous; default 1.25 (SGLang).
 *
 * Cache-aware only by construction: it never looks at the index. With a hot prefix every request
 * hashes to one origin, which is the overload `hybrid` and `cost` exist to fix.
 */
import { z } from "zod";
import { argmin } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";
import { prefixKey, rendezvousOrder } from "./rendezvous.ts";

export const prefixHashParams = z
  .object({
    type: z.literal("prefix-hash"),
    prefixTokens: z.number().int().min(16).max(131072).default(256),
    boundedLoad: z.number().min(1).max(100).nullable().default(1.25),
  })
  .strict();
export type PrefixHashParams = z.infer<typeof prefixHashParams>;

/** Outstanding-request bound for origin `o` under consistent hashing with bounded loads. */
export function loadBound(
  origins: readonly OriginView[],
  eligible: readonly number[],
  o: OriginView,
  factor: number,
): number {
  let total = 0;
  let weights = 0;
  for (const i of eligible) {
    total += origins[i]?.outstanding ?? 0;
    weights += origins[i]?.weight ?? 0;
  }
  return Math.ceil((factor * (total + 1) * o.weight) / weights);
}

export function createPrefixHash(params: PrefixHashParams): Policy {
  return overEligible("prefix-hash", ({ origins, request, tokensPerChunk, rng }, eligible) => {
    const prefixChunks = Math.max(1, Math.round(params.prefixTokens / tokensPerChunk));
    const key = prefixKey(request.chunkHashes, prefixChunks, request.sessionKey);
    if (key === null) {
      const origin = argmin(eligible, (i) => origins[i]?.outstanding ?? 0, rng);
      return { origin, reason: "no-prefix" };
    }
    const ranking = rendezvousOrder(key, eligible, (i) => origins[i] as OriginView);
    const first = ranking[0] as number;
    if (params.boundedLoad === null) return { origin: first, reason: "ring", ranking };
    for (const i of ranking) {
      const o = origins[i] as OriginView;
      if (o.outstanding < loadBound(origins, eligible, o, params.boundedLoad)) {
        return { origin: i, reason: i === first ? "ring" : "ring-bounded", ranking };
      }
    }
    return { origin: first, reason: "ring", ranking };
  });
}
