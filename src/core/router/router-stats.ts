/**
 * The figures of `CoreRouter.stats` (for `/admin/state`, metrics, the dashboard and the
 * simulator) that are read off the router's parts (router-parts.ts): each origin's, and each
 * hot prefix's with the origins holding it. They read and shape into the contract of
 * router-types.ts, and change nothing (the index's match buffer aside, which every read of a
 * prompt overwrites).
 */
import type { Slot } from "../origin-indexes.ts";
import type { DecisionLog } from "./decision-log.ts";
import type { HotPrefix, HotPrefixes } from "./hot-prefixes.ts";
import type { PoolPolicy } from "./pool-policy.ts";
import { priorSpeed, type RouterParts, tokensPerChunk } from "./router-parts.ts";
import type { HotPrefixStats, OriginStats, RouterStats } from "./router-types.ts";
import type { TicketLegs } from "./ticket-legs.ts";

/** Hot prefixes listed by `stats`. */
const HOT_PREFIXES_SHOWN = 10;

/** What the router keeps beside its parts that `stats` reads. */
export interface StatsSources {
  readonly model: string;
  readonly policy: PoolPolicy;
  readonly log: DecisionLog;
  readonly legs: TicketLegs;
  readonly hot: HotPrefixes;
}

/** `CoreRouter.stats`: every figure, read off the parts and the router's books. */
export function routerStats(parts: RouterParts, from: StatsSources, now: number): RouterStats {
  const { model, policy, log, legs, hot } = from;
  const { chunks, nodes, ownerships, bytes } = parts.claims.stats();
  return {
    model,
    policy: policy.name,
    bytesPerToken: parts.bytesPerToken.saved(),
    origins: parts.slots.order.map((slot) => originStats(parts, slot, now)),
    index: { chunks, nodes, ownerships, bytes },
    decisions: { total: log.total, byReason: { ...log.byReason } },
    pd: { byReason: { ...log.byPdReason }, prefillFailed: legs.prefillFailed },
    accuracy: { ...parts.capacity.accuracy },
    failures: { ...legs.failures },
    shadows: policy.shadowStats(),
    hotPrefixes: hot.top(HOT_PREFIXES_SHOWN, now).map((prefix) => hotPrefixStats(parts, prefix)),
    outstanding: legs.size,
    recent: log.recent(),
  };
}

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
