/**
 * What a policy sees of the pool for one request (`PolicyContext`): the origins in settings
 * order, by position (origin-indexes.ts), each as `originView` shapes it from the load board,
 * with the prompt tokens the index believes it holds of the prompt just matched, and the hot
 * prefix and added chunk readings the policies that want them compute on demand. Reads only.
 */
import { asPosition } from "../origin-indexes.ts";
import type { PolicyContext } from "../policies/policy.ts";
import type { Rng } from "../rng.ts";
import { originView } from "./origin-view.ts";
import { tokensPerChunk as chunkTokens, type RouterParts } from "./router-parts.ts";
import type { RouteRequest } from "./router-types.ts";

export function policyContext(
  parts: RouterParts,
  request: RouteRequest,
  rng: Rng,
  now: number,
): PolicyContext {
  const { pool, slots, board, claims } = parts;
  const { chunkHashes, promptTokens } = request;
  const order = slots.order;
  const tokensPerChunk = chunkTokens(pool);
  return {
    request,
    origins: order.map((slot) =>
      originView(
        slots.at(slot).settings,
        board.view(slot, now),
        pool,
        claims.ownedChunks(slot) * tokensPerChunk,
        tokensPerChunk,
      ),
    ),
    matchedTokens: order.map((slot) => claims.matchedTokens(slot, promptTokens)),
    tokensPerChunk,
    attentionTokens: pool.prefillAttentionTokens,
    hotTokens: (minHeat: number) => claims.hotTokens(chunkHashes, promptTokens, now, minHeat),
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
