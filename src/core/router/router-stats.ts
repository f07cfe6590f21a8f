/**
 * The figures of `CoreRouter.stats` (for `/admin/state`, metrics, the dashboard and the
 * simulator) that are read off the router's parts (router-parts.ts): each origin's, and each
 * hot prefix's with the origins holding it. They read and shape into the contract of
 * router-types.ts, and change nothing (the index's match buffer aside, which every read of a
 * prompt overwrites).
 */
import type { Slot } from "../origin-indexes.ts";
import type { HotPrefix } from "./hot-prefixes.ts";
import { priorSpeed, type RouterParts, tokensPerChunk } from "./router-parts.ts";
import type { HotPrefixStats, OriginStats } from "./router-types.ts";

/**
 * The origin in `slot`: settings, load, its prefill speed (learned, and the prior), what the
 * index believes it holds and may hold.
 */
export function originStats(parts: RouterParts, slot: Slot, now: number): OriginStats {
  const { settings, routed } = parts.slots.at(slot);
  const load = parts.board.view(slot, now);
  const chunkTokens = tokensPerChunk(parts);
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
    measuredPrefill: load.measuredPrefill,
    prefill: { ...parts.speeds.saved(slot), priorTokensPerSecond: priorSpeed(parts, slot) },
    ownedTokens: parts.claims.ownedChunks(slot) * chunkTokens,
    capacityTokens: parts.capacity.effectiveChunks(slot) * chunkTokens,
    routed,
  };
}

/** A hot prefix and the origins (ids) the index believes hold it whole. */
export function hotPrefixStats(parts: RouterParts, prefix: HotPrefix): HotPrefixStats {
  const { slots } = parts;
  const holders = parts.claims.holders(prefix.hashes, prefix.depth, slots.order);
  return {
    id: (prefix.hashes.at(-1) as number).toString(16),
    tokens: prefix.depth * tokensPerChunk(parts),
    requests: prefix.requests,
    error: prefix.error,
    ratePerSecond: prefix.ratePerSecond,
    origins: holders.map((slot) => slots.at(slot).settings.id),
  };
}
