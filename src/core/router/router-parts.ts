/**
 * The live parts of one pool's router, as the modules beside core-router.ts read them: the
 * settings, origin slots, the index, the load board, capacities and prefill speeds. The router replaces the
 * settings on every change and the index and the board when a chunk size, budget or feed
 * changes or a snapshot is restored, so `RouterParts` is a view the router keeps current (its
 * getters read the router's fields): a module reads a part at each call and never keeps it.
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { LoadBoard } from "../load-board/load-board.ts";
import type { Slot } from "../origin-indexes.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
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
}

export function tokensPerChunk(pool: PoolSettings): number {
  return pool.chunkBytes / BYTES_PER_TOKEN;
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

/** The prior of the origin's prefill speed: its own setting, else the pool's. */
export function priorSpeed(parts: RouterParts, slot: Slot): number {
  return parts.slots.at(slot).settings.prefillTokensPerSecond ?? parts.pool.prefillTokensPerSecond;
}
