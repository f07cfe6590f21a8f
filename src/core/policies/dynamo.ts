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
 * At temperature 0 (upstream's default) the lowest cost wins; ties go to the worker with the
 * smaller radix tree (fewer cached blocks in the index), then at random. Above 0 the worker is
 * drawn by softmax over the costs normalised by their range (scheduler.rs `softmax_sample`):
 * p ~ exp(-(cost - min) / ((max - min) x temperature)), uniform when all costs are equal.
 * O(n x prompt chunks) for the new blocks.
 *
 * Information, as upstream has it: in-flight prefill tokens count until the request's first
 * token (Dynamo's frontend streams the tokens; the simulator reports them with `firstToken`,
 * the Worker does not, so there they count until the request ends); cached prefixes come from
 * the engines' KV events (run it on a pool with `indexFeed: "engine-events"`, as the simulator
 * does; on the router's own index it reads that, like Dynamo's `--no-router-kv-events` mode);
 * active blocks are the router's own in-flight prompts (load-board/active-chunks.ts). Blocks
 * are the router's chunks.
 *
 * Parameters: overlapWeight 0..100, default 1 (`--kv-overlap-score-weight`); temperature 0..100,
 * default 0 (`--router-temperature`); trackActivePrefill, default true (upstream counts
 * in-flight prefill tokens by default; false drops the term).
 */
import { z } from "zod";
import type { Rng } from "../rng.ts";
import { type Compare, pickMin, rankWith } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const dynamoParams = z
  .object({
    type: z.literal("dynamo"),
    overlapWeight: z.number().min(0).max(100).default(1),
    temperature: z.number().min(0).max(100).default(0),
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
    const origin =
      params.temperature > 0
        ? softmaxSample(eligible, cost, params.temperature, rng)
        : pickMin(eligible, compare, rng);
    return {
      origin,
      reason: "min-cost",
      ranking: rankWith(eligible, compare),
    };
  });
}

/** Upstream's `softmax_sample`: costs scaled by their range, lower cost likelier. */
function softmaxSample(
  eligible: readonly number[],
  cost: readonly number[],
  temperature: number,
  rng: Rng,
): number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const i of eligible) {
    lo = Math.min(lo, cost[i] as number);
    hi = Math.max(hi, cost[i] as number);
  }
  if (hi === lo) return eligible[rng.int(eligible.length)] as number;
  const weights = eligible.map((i) =>
    Math.exp(-((cost[i] as number) - lo) / ((hi - lo) * temperature)),
  );
  let u = rng.next() * weights.reduce((a, w) => a + w, 0);
  for (let k = 0; k < eligible.length; k++) {
    u -= weights[k] as number;
    if (u < 0) return eligible[k] as number;
  }
  return eligible[eligible.length - 1] as number;
}
