/**
 * What a policy sees of the pool for one request (`PolicyContext`): the origins in settings
 * order, by position (origin-indexes.ts), each as `originView` shapes it from the load board,
 * with the prompt tokens the index believes it holds of the prompt just matched, and the hot
 * prefix and added chunk readings the policies that want them compute on demand. Reads only.
 * An edge replica reads each origin's load through its hooks (its coordinator's load vector plus
 * its own leases since: edge-hooks.ts) instead of its own board alone. Admission reads the same
 * origin views (`originViews`), so in either coordination mode it judges the load the policy sees.
 */
import { asPosition } from "../origin-indexes.ts";
import type { OriginView, PolicyContext } from "../policies/policy.ts";
import type { Rng } from "../rng.ts";
import type { EdgeHooks } from "./edge-hooks.ts";
import { originView } from "./origin-view.ts";
import { tokensPerChunk as chunkTokens, type RouterParts } from "./router-parts.ts";
import type { RouteRequest } from "./router-types.ts";

export function policyContext(
  parts: RouterParts,
  request: RouteRequest,
  rng: Rng,
  now: number,
  edge?: EdgeHooks,
): PolicyContext {
  const { pool, slots, board, claims } = parts;
  const { chunkHashes, promptTokens } = request;
  const order = slots.order;
  const tokensPerChunk = chunkTokens(pool);
  return {
    request,
    origins: originViews(parts, now, edge),
    matchedTokens: order.map((slot) => claims.matchedTokens(slot, promptTokens)),
    tokensPerChunk,
    attentionTokens: pool.prefillAttentionTokens,
    hotTokens: (minHeat: number) => claims.hotTokens(chunkHashes, promptTokens, now, minHeat),
    sharedTokens: (minHeat: number) => claims.sharedTokens(chunkHashes, promptTokens, now, minHeat),
    addedChunks: (i: number) =>
      board.addedChunks(
        slots.slotAt(asPosition(i)),
        chunkHashes,
        promptTokens > chunkHashes.length * tokensPerChunk,
      ),
    now,
    rng,
  };
}

/**
 * Every origin as a policy sees it, in settings order (admission reads the same views): an edge
 * replica's through its hooks.
 */
export function originViews(parts: RouterParts, now: number, edge?: EdgeHooks): OriginView[] {
  const { pool, slots, board, claims } = parts;
  const tokensPerChunk = chunkTokens(pool);
  return slots.order.map((slot) => {
    const { settings } = slots.at(slot);
    const own = board.view(slot, now);
    return originView(
      settings,
      edge ? edge.load(settings.id, own, now) : own,
      pool,
      claims.ownedChunks(slot) * tokensPerChunk,
      tokensPerChunk,
    );
  });
}
