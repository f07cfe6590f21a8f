/**
 * The figures of `CoreRouter.stats` (for `/admin/state`, metrics, the dashboard and the
 * simulator), assembled from what the router's parts read out. Pure: the router gathers the
 * readings, these shape them into the contract of router-types.ts and change nothing.
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import type { OriginSettings } from "../settings/settings-schema.ts";
import type { HotPrefix } from "./hot-prefixes.ts";
import type { HotPrefixStats, OriginStats } from "./router-types.ts";

/** What the router's parts know of one origin. */
export interface OriginReading {
  readonly settings: OriginSettings;
  /** Requests leased to it since it took its slot. */
  readonly routed: number;
  readonly load: OriginLoadView;
  /** Chunks the index believes it holds, and may hold. */
  readonly ownedChunks: number;
  readonly capacityChunks: number;
}

export function originStats(o: OriginReading, tokensPerChunk: number): OriginStats {
  const { settings, load } = o;
  return {
    id: settings.id,
    url: settings.url,
    eligible: load.eligible,
    health: load.health,
    circuit: load.circuit,
    consecutiveFailures: load.consecutiveFailures,
    outstanding: load.outstanding,
    queuedPrefillTokens: Math.round(load.queuedPrefillTokens),
    activeTokens: load.activeTokens,
    engine: load.engine,
    reportAgeMs: load.reportAgeMs,
    ownedTokens: o.ownedChunks * tokensPerChunk,
    capacityTokens: o.capacityChunks * tokensPerChunk,
    routed: o.routed,
  };
}

/** A hot prefix and the origins (ids) the index believes hold it whole. */
export function hotPrefixStats(
  prefix: HotPrefix,
  holders: string[],
  tokensPerChunk: number,
): HotPrefixStats {
  return {
    id: (prefix.hashes.at(-1) as number).toString(16),
    tokens: prefix.depth * tokensPerChunk,
    requests: prefix.requests,
    error: prefix.error,
    ratePerSecond: prefix.ratePerSecond,
    origins: holders,
  };
}
