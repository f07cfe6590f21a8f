/**
 * dynamo: NVIDIA Dynamo's KV router cost, as documented
 * (ai-dynamo/dynamo docs/components/router/router_guide.md; lib/kv-router selector
 * `DefaultWorkerSelector`):
 *   cost = overlapWeight * prefill_blocks + decode_blocks
 * prefill_blocks = blocks of this prompt the worker has not cached; decode_blocks = KV blocks held
 * by the worker's active requests (the router's own tracking of in-flight prompts). Lowest cost
 * wins; temperature 0, ties at random (Dynamo's reservoir tie-break). O(n).
 *
 * Blocks are the router's chunks; since the cost is linear in blocks, the block size does not
 * change the choice. Newer Dynamo versions add the worker's active prefill blocks to
 * prefill_blocks; `trackActivePrefill` turns that on.
 *
 * Parameters: overlapWeight 0..100, default 1 (Dynamo's `--kv-overlap-score-weight`);
 * trackActivePrefill, default false.
 */
import { z } from "zod";
import { argmin, rankBy } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const dynamoParams = z
  .object({
    type: z.literal("dynamo"),
    overlapWeight: z.number().min(0).max(100).default(1),
    trackActivePrefill: z.boolean().default(false),
  })
  .strict();
export type DynamoParams = z.infer<typeof dynamoParams>;

export function createDynamo(params: DynamoParams): Policy {
  return overEligible(
    "dynamo",
    ({ origins, request, matchedTokens, tokensPerChunk, rng }, eligible) => {
      const cost = (i: number) => {
        const o = origins[i] as OriginView;
        const uncached = Math.max(0, request.promptTokens - (matchedTokens[i] ?? 0));
        const active = params.trackActivePrefill ? o.queuedPrefillTokens : 0;
        const prefillBlocks = (uncached + active) / tokensPerChunk;
        const decodeBlocks = o.activeTokens / tokensPerChunk;
        return params.overlapWeight * prefillBlocks + decodeBlocks;
      };
      return {
        origin: argmin(eligible, cost, rng),
        reason: "min-cost",
        ranking: rankBy(eligible, cost),
      };
    },
  );
}
