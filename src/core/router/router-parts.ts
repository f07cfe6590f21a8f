/**
 * The live parts of one pool's router, as the modules beside core-router.ts read them: the
 * settings, origin slots, the index, the load board and capacities. The router replaces the
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

export interface RouterParts {
  readonly pool: PoolSettings;
  readonly slots: OriginSlots;
  readonly claims: ClaimIndex;
  readonly board: LoadBoard;
  readonly capacity: CapacityLearner;
}

export function tokensPerChunk(pool: PoolSettings): number {
  return pool.chunkBytes / BYTES_PER_TOKEN;
}

/** The prefill speed of the origin in `slot`: its own setting, else the pool's. */
export function prefillSpeed(parts: RouterParts, slot: Slot): number {
  return parts.slots.at(slot).settings.prefillTokensPerSecond ?? parts.pool.prefillTokensPerSecond;
}
