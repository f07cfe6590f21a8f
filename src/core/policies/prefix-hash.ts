/**
 * prefix-hash: sticky routing by the request's prefix, with SGLang's bounded-load overflow
 * (sgl-project/sglang sgl-model-gateway/src/policies/prefix_hash.rs @065f331f, `select_worker`;
 * consistent hashing with bounded loads, Mirrokni et al. 2018).
 *
 * Algorithm, over eligible origins with load = router-local requests in flight:
 * 1. key = chained hash of the first `prefixTokens` (or the session key when given); the ring's
 *    origin is the first in rendezvous order.
 * 2. if its load <= boundedLoad * (total load + 1) / n, take it ("ring");
 * 3. else the least-loaded origin under that bound ("overflow"; the least-loaded origin always
 *    is, since its load is at most the mean).
 * A prompt shorter than one chunk has no key and goes to the least-loaded origin ("no-prefix").
 * With weights the bound of origin o scales by weight_o / mean weight, and loads compare per
 * unit of weight. O(n log n) per request for the order.
 *
 * Deviations: the ring is rendezvous hashing over chunk hashes (SGLang: a hash ring over xxh3 of
 * the first 256 token ids); overflow ties go to the earlier origin in rendezvous order (SGLang:
 * the earlier in its worker list).
 *
 * Parameters:
 * - prefixTokens: tokens of prefix that form the key, 16..131072, default 256 (SGLang's
 *   prefix_token_count). Short keys group more requests (more locality, hotter spots).
 * - boundedLoad: load factor >= 1, or null for pure rendezvous; default 1.25 (SGLang's
 *   `--prefix-hash-load-factor`).
 * - skipShared: key on the first prefixTokens *past* the prefix different prompts share (the
 *   index's `sharedTokens`: a hot prefix where prompts branch, e.g. a system prompt); default
 *   false (SGLang). The router's fallbacks set it (router/fallback-pool.ts): keyed from the
 *   start, every request behind one system prompt gets one key, so one origin.
 * - sharedHeat: requests through a prefix (decayed, half-life 60 s) before it counts as shared
 *   for skipShared, 1..1e6, default 4.
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
    skipShared: z.boolean().default(false),
    sharedHeat: z.number().min(1).max(1e6).default(4),
  })
  .strict();
export type PrefixHashParams = z.infer<typeof prefixHashParams>;

/** Origin `o`'s load bound under consistent hashing with bounded loads (SGLang's rule). */
function loadBound(
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
  return (factor * (total + 1) * o.weight) / weights;
}

export function createPrefixHash(params: PrefixHashParams): Policy {
  return overEligible("prefix-hash", (context, eligible) => {
    const { origins, request, tokensPerChunk, rng } = context;
    const load = (i: number) => {
      const o = origins[i] as OriginView;
      return o.outstanding / o.weight;
    };
    const prefixChunks = Math.max(1, Math.round(params.prefixTokens / tokensPerChunk));
    const skip = params.skipShared
      ? Math.floor(context.sharedTokens(params.sharedHeat) / tokensPerChunk)
      : 0;
    const key = prefixKey(request.chunkHashes, prefixChunks, request.sessionKey, skip);
    if (key === null) return { origin: argmin(eligible, load, rng), reason: "no-prefix" };
    const ranking = rendezvousOrder(key, eligible, (i) => origins[i] as OriginView);
    const first = ranking[0] as number;
    const factor = params.boundedLoad;
    const passes = (i: number) => {
      const o = origins[i] as OriginView;
      return factor === null || o.outstanding <= loadBound(origins, eligible, o, factor);
    };
    if (passes(first)) return { origin: first, reason: "ring", ranking };
    // The least-loaded origin always passes (its load is at most the mean), so it is the one.
    let best = first;
    for (const i of ranking) if (load(i) < load(best)) best = i;
    return {
      origin: best,
      reason: "overflow",
      ranking: [best, ...ranking.filter((i) => i !== best)],
    };
  });
}
