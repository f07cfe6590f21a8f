/**
 * What a policy sees of one origin (`OriginView`): its settings and the load board's reading at
 * decision time. Pure; the one place that shapes the view, so every policy, shadow and the
 * failover order see the same. A prefill origin is eligible only where it may serve the
 * request whole (`servesWhole`: policy-context.ts asks disaggregation.ts); else it serves no
 * whole request nor a decode, and the P/D decision reads prefill origins on its own.
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import type { OriginView } from "../policies/policy.ts";
import type { OriginSettings, PoolSettings } from "../settings/settings-schema.ts";

export function originView(
  settings: OriginSettings,
  load: OriginLoadView,
  pool: PoolSettings,
  indexedTokens: number,
  tokensPerChunk: number,
  servesWhole: boolean,
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
    prefillTokensPerSecond: settings.prefillTokensPerSecond ?? pool.prefillTokensPerSecond,
    weight: settings.weight,
  };
}
