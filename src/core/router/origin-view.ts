/**
 * What a policy sees of one origin (`OriginView`): its settings, the load board's reading at
 * decision time and its prefill speed as learned (router-parts.ts's `prefillSpeed`). Pure; the one place that shapes the view, so every policy, shadow and the
 * failover order see the same. A prefill origin is eligible only where it may serve the
 * request whole (`servesWhole`: policy-context.ts asks disaggregation.ts); else it serves no
 * whole request nor a decode, and the P/D decision reads prefill origins on its own.
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import type { OriginView } from "../policies/policy.ts";
import type { OriginSettings } from "../settings/settings-schema.ts";

export function originView(
  settings: OriginSettings,
  load: OriginLoadView,
  indexedTokens: number,
  tokensPerChunk: number,
  servesWhole: boolean,
  prefillTokensPerSecond: number,
): OriginView {
  return {
    id: settings.id,
    eligible: load.eligible && (settings.role !== "prefill" || servesWhole),
    outstanding: load.outstanding,
    queuedPrefillTokens: load.queuedPrefillTokens,
    activeTokens: load.activeTokens,
    prefillingTokens: load.prefillingTokens,
    activeChunks: load.activeChunks ?? load.activeTokens / tokensPerChunk,
    indexedTokens,
    engine: load.engine,
    prefillTokensPerSecond,
    weight: settings.weight,
  };
}
