/**
 * What a policy sees of the pool for one request (`PolicyContext`): the origins in settings
 * order, by position (origin-indexes.ts), each as `originView` shapes it from the load board,
 * with the prompt tokens the index believes it holds of the prompt just matched, and the hot
 * prefix and added chunk readings the policies that want them compute on demand. Reads only.
 * A prefill origin is offered to the policy where the pool lets prefill origins serve whole
 * requests and disaggregation.ts's `wholeOnPrefill` lets it serve this one (no prefill queued,
 * a request the rule keeps local there).
 * An edge replica reads each origin's load through its hooks (its coordinator's load vector plus
 * its own leases since: edge-hooks.ts) instead of its own board alone. Admission reads the same
 * origin views (`originViews`), so in either coordination mode it judges the load the policy sees.
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import { asPosition } from "../origin-indexes.ts";
import type { OriginView, PolicyContext } from "../policies/policy.ts";
import type { Rng } from "../rng.ts";
import type { RouteRequest } from "../route-request.ts";
import type { OriginSettings } from "../settings/settings-schema.ts";
import { wholeOnPrefill } from "./disaggregation.ts";
import type { EdgeHooks } from "./edge-hooks.ts";
import { originView } from "./origin-view.ts";
import { tokensPerChunk as chunkTokens, prefillSpeed, type RouterParts } from "./router-parts.ts";

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
  const tokensPerChunk = chunkTokens(parts);
  const matchedTokens = order.map((slot) => claims.matchedTokens(slot, promptTokens));
  const whole = pool.disaggregation.prefillServesWhole;
  return {
    request,
    origins: originViews(
      parts,
      now,
      edge,
      (settings, i, load) =>
        whole &&
        settings.role === "prefill" &&
        wholeOnPrefill(
          pool.disaggregation,
          promptTokens,
          matchedTokens[i] as number,
          load.queuedPrefillTokens,
        ),
    ),
    matchedTokens,
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
export function originViews(
  parts: RouterParts,
  now: number,
  edge?: EdgeHooks,
  servesWhole?: (settings: OriginSettings, position: number, load: OriginLoadView) => boolean,
): OriginView[] {
  const { slots, board, claims } = parts;
  const tokensPerChunk = chunkTokens(parts);
  return slots.order.map((slot, i) => {
    const { settings } = slots.at(slot);
    const own = board.view(slot, now);
    const load = edge ? edge.load(settings.id, own, now) : own;
    return originView(
      settings,
      load,
      claims.ownedChunks(slot) * tokensPerChunk,
      tokensPerChunk,
      servesWhole?.(settings, i, load) ?? false,
      prefillSpeed(parts, slot),
    );
  });
}
