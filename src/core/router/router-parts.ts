/**
 * The live parts of one pool's router, as the modules beside core-router.ts read them: the
 * settings, origin slots, the index, the load board, capacities, prefill speeds and the pool's
 * bytes per token. The router replaces the
 * settings on every change and the index and the board when a chunk size, budget or feed
 * changes or a snapshot is restored, in the one object it hands out, so `RouterParts` is a view
 * the router keeps current: a module reads a part at each call and never keeps it.
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { LoadBoard } from "../load-board/load-board.ts";
import type { Slot } from "../origin-indexes.ts";
import type { RouteRequest } from "../route-request.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import type { BytesPerTokenLearner } from "./bytes-per-token.ts";
import type { CapacityLearner } from "./capacity-learner.ts";
import type { ClaimIndex } from "./claim-index.ts";
import type { OriginSlots } from "./origin-slots.ts";
import type { SpeedLearner } from "./speed-learner.ts";

export interface RouterParts {
  readonly pool: PoolSettings;
  readonly slots: OriginSlots;
  readonly claims: ClaimIndex;
  readonly board: LoadBoard;
  readonly capacity: CapacityLearner;
  readonly speeds: SpeedLearner;
  readonly bytesPerToken: BytesPerTokenLearner;
}

/** Tokens in a chunk of `chunkBytes` at `bytesPerToken` (whole, at least 1). */
export function chunkTokens(chunkBytes: number, bytesPerToken = BYTES_PER_TOKEN): number {
  return Math.max(1, Math.round(chunkBytes / bytesPerToken));
}

/** Tokens in one index chunk at the pool's learned bytes per token (bytes-per-token.ts). */
export function tokensPerChunk(parts: RouterParts): number {
  return chunkTokens(parts.pool.chunkBytes, parts.bytesPerToken.ratio);
}

/**
 * A request's prompt tokens as the core estimates them: its canonical bytes at the learned
 * bytes per token when the caller sent them, else the caller's own estimate. Every token
 * estimate the core makes at route time reads this.
 */
export function promptTokensOf(
  parts: RouterParts,
  request: Pick<RouteRequest, "promptTokens" | "promptBytes">,
): number {
  const { promptBytes } = request;
  return promptBytes === undefined ? request.promptTokens : parts.bytesPerToken.tokens(promptBytes);
}

/**
 * The pool's bytes per token moved: the index reads matched chunks as tokens at the new ratio.
 * (KV capacities stay converted at the prior: capacity-learner.ts; docs/architecture.md.)
 */
export function retoken(parts: RouterParts): void {
  parts.claims.retoken(tokensPerChunk(parts));
}

/**
 * The prefill speed of the origin in `slot` as routing reads it: learned (speed-learner.ts),
 * else its prior. Every reader of an origin's speed reads it here.
 */
export function prefillSpeed(parts: RouterParts, slot: Slot): number {
  return parts.speeds.speed(slot);
}

/**
 * The board's queues drain at the speeds routing reads: after a speed was learned (which may
 * move every origin still without evidence: speed-learner.ts), from `now` on.
 */
export function drainAtLearnedSpeeds(parts: RouterParts, now: number): void {
  for (const slot of parts.slots.order) parts.board.setSpeed(slot, parts.speeds.speed(slot), now);
}

/**
 * Time passed: learned speeds weigh their aged evidence against the peer-corrected prior
 * (speed-learner.ts), and the board's queues drain at what they read from `now` on.
 */
export function ageSpeeds(parts: RouterParts, now: number): void {
  if (parts.speeds.age(now)) drainAtLearnedSpeeds(parts, now);
}

/** The prior of the origin's prefill speed: its own setting, else the pool's. */
export function priorSpeed(parts: RouterParts, slot: Slot): number {
  return parts.slots.at(slot).settings.prefillTokensPerSecond ?? parts.pool.prefillTokensPerSecond;
}
