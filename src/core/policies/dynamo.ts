/**
 * dynamo: NVIDIA Dynamo's KV router with its defaults (ai-dynamo/dynamo
 * lib/llm/src/kv_router/scheduler.rs and config.rs @db19bd2a; the cost is documented in
 * docs/components/router/router_guide.md).
 *
 * For each eligible worker, as if the request joined it (`potential_blocks_and_tokens`):
 *   prefill_tokens = its in-flight prefill tokens + this prompt's tokens it has not cached
 *   decode_blocks  = the KV blocks its in-flight requests hold, a block shared by several once,
 *                    + this prompt's blocks not among them
 *   cost = overlapWeight * prefill_tokens / block size + decode_blocks
 * Lowest cost wins, temperature 0; ties go to the worker with the smaller radix tree (fewer
 * cached blocks in the index), then at random. O(n x prompt chunks) for the new blocks.
 *
 * Information, as upstream has it: in-flight prefill tokens count until the request's first
 * token (Dynamo's frontend streams the tokens; the simulator reports them with `firstToken`,
 * the Worker does not, so there they count until the request ends); cached prefixes come from
 * the engines' KV events (run it on a pool with `indexFeed: "engine-events"`, as the simulator
 * does; on the router's own index it reads that, like Dynamo's `--no-router-kv-events` mode);
 * active blocks are the router's own in-flight prompts (load-board/active-chunks.ts). Blocks
 * are the router's chunks.
 *
 * Parameters: overlapWeight 0..100, default 1 (`--kv-overlap-score-weight`); trackActivePrefill,
 * default true (upstream counts in-flight prefill tokens by default; false drops the term).
 */
import { z } from "zod";
import { type Compare, pickMin, rankWith } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const dynamoParams = z
  .object({
    type: z.literal("dynamo"),
    overlapWeight: z.number().min(0).max(100).default(1),
    trackActivePrefill: z.boolean().default(true),
  })
  .strict();
export type DynamoParams = z.infer<typeof dynamoParams>;

export function createDynamo(params: DynamoParams): Policy {
  return overEligible("dynamo", (context, eligible) => {
    const { origins, request, matchedTokens, tokensPerChunk, rng } = context;
    const cost: number[] = new Array(origins.length).fill(0);
    for (const i of eligible) {
      const o = origins[i] as OriginView;
      const uncached = Math.max(0, request.promptTokens - (matchedTokens[i] ?? 0));
      const active = params.trackActivePrefill ? o.prefillingTokens : 0;
      const decodeBlocks = o.activeChunks + context.addedChunks(i);
      cost[i] = (params.overlapWeight * (uncached + active)) / tokensPerChunk + decodeBlocks;
    }
    // Lower cost, then the smaller tree; then at random.
    const compare: Compare = (a, b) =>
      (cost[a] as number) - (cost[b] as number) ||
      (origins[a] as OriginView).indexedTokens - (origins[b] as OriginView).indexedTokens;
    return {
      origin: pickMin(eligible, compare, rng),
      reason: "min-cost",
      ranking: rankWith(eligible, compare),
    };
  });
}
