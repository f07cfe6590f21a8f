/**
 * What edge coordination (src/core/edge) asks of a `CoreRouter` beyond the object's protocol:
 * a coordinator records each isolate's decisions (`record`: lease and claim as `route` does
 * after its policy, so `reroute`, `cancel` and `complete` work on them), reads the pool's load
 * (`loads`) and the hottest prefixes (`hottest`); a replica adopts other isolates' claims
 * (`adopt`, `drop`) and its coordinator's learned capacities, prefill speeds and bytes per token
 * (`adoptCapacity`, `adoptSpeed`, `adoptBytesPerToken`). A request pinned to its origin (a
 * stored response's follow-up: core/responses/stored-route.ts) is leased with `record` too, in
 * either mode. The router hands this narrower interface out as `router.seams`, so its own
 * surface stays the protocol every holder drives; the bodies work over the router's live parts.
 */

import type { LearnedBytesPerToken } from "./bytes-per-token.ts";
import type { LearnedCapacity } from "./capacity-learner.ts";
import type { DecisionLog } from "./decision-log.ts";
import type { LiveClaim, OriginLoad, RecordedClaim, RecordedRoute } from "./edge-hooks.ts";
import type { HotPrefix, HotPrefixes } from "./hot-prefixes.ts";
import { drainAtLearnedSpeeds, promptTokensOf, type RouterParts, retoken } from "./router-parts.ts";
import type { LearnedSpeed } from "./speed-learner.ts";
import type { TicketLegs } from "./ticket-legs.ts";

export class ReplicaSeams {
  readonly #parts: RouterParts;
  readonly #legs: TicketLegs;
  readonly #hot: HotPrefixes;
  readonly #log: DecisionLog;

  constructor(parts: RouterParts, legs: TicketLegs, hot: HotPrefixes, log: DecisionLog) {
    this.#parts = parts;
    this.#legs = legs;
    this.#hot = hot;
    this.#log = log;
  }

  /**
   * Another router routed `ticket` to `route.origin`; its prompt is the path to the chunk
   * `parent` names, then `run`. Returns the prompt's hashes (empty when `parent` is unknown
   * here: leased, not claimed), the chunks the origin held before and the deepest any origin
   * held; null for an unknown origin or a live ticket.
   */
  record(ticket: string, route: RecordedRoute, now: number): RecordedClaim | null {
    const { slots, claims } = this.#parts;
    this.#legs.expire(now);
    const slot = slots.slotOf(route.origin);
    if (slot === undefined || this.#legs.get(ticket)) return null;
    const path = route.parent === null ? [] : claims.pathOf(route.parent);
    const hashes = path === null ? [] : path.concat(route.run);
    const deepestChunks = claims.match(hashes);
    this.#hot.observe(hashes, now);
    const { reason, promptBytes } = route;
    const promptTokens = promptTokensOf(this.#parts, route);
    const claim = this.#legs.lease(ticket, hashes, slot, promptTokens, null, now, promptBytes);
    this.#log.record({
      at: now,
      origin: route.origin,
      reason,
      matchedTokens: claim.matchedTokens,
      promptTokens,
      prefillOrigin: null,
      pdReason: null,
    });
    return { hashes, heldChunks: claim.matchedChunks, deepestChunks };
  }

  /**
   * The live ticket's origin, its prompt's hashes and the chunks the origin held of it before
   * the ticket claimed it (what taking the claim back leaves); null for an unknown ticket.
   */
  claimOf(ticket: string): LiveClaim | null {
    const t = this.#legs.get(ticket);
    if (!t) return null;
    const { slot, hashes, matchedChunks } = t.claim;
    return { origin: this.#parts.slots.at(slot).settings.id, hashes, heldChunks: matchedChunks };
  }

  /**
   * Another router claimed a prompt for `originId`: the path to the chunk `parent` names, then
   * `run`. No lease: the coordinator's load vector counts it. Its prefix warms by one request
   * unless the claim is this router's own, back from the coordinator (`own`: it warmed when
   * made). False when the origin is unknown or no origin here holds `parent`.
   */
  adopt(
    originId: string,
    parent: number | null,
    run: readonly number[],
    own: boolean,
    now: number,
  ): boolean {
    const slot = this.#parts.slots.slotOf(originId);
    return slot !== undefined && this.#parts.claims.claimRun(slot, parent, run, !own, now);
  }

  /**
   * `originId` holds the path to the chunk `parent` names (null: nothing of it) but neither the
   * chunk named `hash` nor below it (another router's failure). No request went through: no heat.
   */
  drop(originId: string, parent: number | null, hash: number, now: number): void {
    const slot = this.#parts.slots.slotOf(originId);
    if (slot === undefined) return;
    if (parent !== null) this.#parts.claims.claimRun(slot, parent, [], false, now);
    this.#parts.claims.dropFrom(slot, hash);
  }

  /** `originId`'s capacity as another router learned it (a replica takes its coordinator's). */
  adoptCapacity(originId: string, learned: LearnedCapacity): void {
    const slot = this.#parts.slots.slotOf(originId);
    if (slot !== undefined) this.#parts.capacity.adopt(slot, learned);
  }

  /**
   * `originId`'s prefill speed as another router learned it (a replica takes its coordinator's;
   * a restored router its snapshot's); the board's queue drains at it from `now`.
   */
  adoptSpeed(originId: string, learned: LearnedSpeed, now: number): void {
    const slot = this.#parts.slots.slotOf(originId);
    if (slot === undefined) return;
    this.#parts.speeds.adopt(slot, learned);
    drainAtLearnedSpeeds(this.#parts, now);
  }

  /** Take another router's learned bytes per token (a replica its coordinator's). */
  adoptBytesPerToken(learned: LearnedBytesPerToken): void {
    this.#parts.bytesPerToken.adopt(learned);
    retoken(this.#parts);
  }

  /** The `k` hottest shallow prefixes (hot-prefixes.ts), hottest first. */
  hottest(k: number, now: number): HotPrefix[] {
    return this.#hot.top(k, now);
  }

  /** Each origin's load as this router reads it, in settings order, with what it learned. */
  loads(now: number): OriginLoad[] {
    const { slots, board, capacity, speeds } = this.#parts;
    return slots.order.map((slot) => ({
      id: slots.at(slot).settings.id,
      load: board.view(slot, now),
      capacity: capacity.saved(slot),
      speed: speeds.saved(slot),
    }));
  }
}
