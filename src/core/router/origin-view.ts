/**
 * What a policy sees of one origin (`OriginView`): its settings and the load board's reading at
 * decision time. Pure; the one place that shapes the view, so every policy, shadow and the
 * failover order see the same. A prefill origin never serves a whole request (nor a decode),
 * so to all of them it is not eligible; the P/D decision reads prefill origins on its own.
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
): OriginView {
  return {
    id: settings.id,
    eligible: load.eligible && settings.role !== "prefill",
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
