/**
 * What each live ticket holds and how each of its legs is undone or settled. A ticket holds a
 * decode leg (the origin serving the request, alone or taking a remote prefill's KV) and, while
 * disaggregated, a prefill leg; each leg is a load-board lease (under the ticket, or under
 * `prefillLeaseKey(ticket)`) and a claim in the index. Undoing a leg releases its lease as not
 * served and takes its claim back; settling one tells the board's circuit, and the capacity
 * learners (capacity, prefill speed), what the request proved. Failures are counted by kind here, against whichever leg
 * failed (`failures`, `prefillFailed` in `stats`).
 *
 * The router decides which origins serve a ticket and when it ends; this module keeps the books,
 * so `route` / `reroute` / `prefillFailed` / `cancel` / `complete` read as one step each here.
 */
import type { Slot } from "../origin-indexes.ts";
import { prefillWork } from "../prefill-work.ts";
import type { Claim } from "./claim-index.ts";
import { drainAtLearnedSpeeds, type RouterParts, retoken, tokensPerChunk } from "./router-parts.ts";
import type { FailureKind, Outcome } from "./router-types.ts";
import { prefillLeaseKey, type Ticket, Tickets, ticketOfPrefillLease } from "./tickets.ts";

export class TicketLegs {
  readonly #parts: RouterParts;
  readonly #tickets: Tickets;
  readonly #failures: Partial<Record<FailureKind, number>> = {};
  #prefillFailed = 0;

  constructor(parts: RouterParts, ticketPrefix: string) {
    this.#parts = parts;
    this.#tickets = new Tickets(ticketPrefix);
  }

  /** A ticket id never issued before; it holds nothing until `lease`. */
  issue(): string {
    return this.#tickets.issue();
  }

  /** Live tickets: requests routed and not yet completed, cancelled, expired or dropped. */
  get size(): number {
    return this.#tickets.size;
  }

  get(ticket: string): Ticket | undefined {
    return this.#tickets.get(ticket);
  }

  /** Failures by kind, whichever leg failed. */
  get failures(): Readonly<Partial<Record<FailureKind, number>>> {
    return this.#failures;
  }

  /** Prefill legs that failed (`failPrefill`). */
  get prefillFailed(): number {
    return this.#prefillFailed;
  }

  /**
   * Count the request against the origin in `slot` and claim the prompt there (just matched);
   * with a prefill origin, that one is leased (under the prefill key) and claimed too, and the
   * prefill work is its alone: the origin in `slot` takes the KV.
   */
  lease(
    ticket: string,
    hashes: ArrayLike<number>,
    slot: Slot,
    promptTokens: number,
    prefillSlot: Slot | null,
    now: number,
    promptBytes?: number,
  ): Claim {
    const { claims, slots } = this.#parts;
    const claim = claims.claim(hashes, slot, promptTokens, now);
    let prefill: Claim | null = null;
    if (prefillSlot !== null) {
      prefill = claims.claim(hashes, prefillSlot, promptTokens, now);
      const key = prefillLeaseKey(ticket);
      this.#leaseBoard(key, prefillSlot, hashes, promptTokens, prefill.matchedTokens, now);
      slots.at(prefillSlot).routed++;
    }
    const cached = prefill ? promptTokens : claim.matchedTokens;
    const queuedTokens = this.#parts.board.queued(slot, now);
    this.#leaseBoard(ticket, slot, hashes, promptTokens, cached, now);
    slots.at(slot).routed++;
    this.#tickets.set(ticket, claim, prefill, queuedTokens, promptBytes);
    return claim;
  }

  /** A board lease whose prefill work is the prompt's beyond `cachedTokens`. */
  #leaseBoard(
    key: string,
    slot: Slot,
    hashes: ArrayLike<number>,
    promptTokens: number,
    cachedTokens: number,
    now: number,
  ): void {
    const { board, pool } = this.#parts;
    const work = prefillWork(cachedTokens, promptTokens, pool.prefillAttentionTokens);
    board.lease(key, slot, promptTokens, work, now, {
      uncachedTokens: promptTokens - cachedTokens,
      hashes,
      partial: promptTokens > hashes.length * tokensPerChunk(this.#parts),
    });
  }

  /**
   * The live ticket's decode origin failed before its first byte: its leg is undone and the
   * failure counted against it; a prefill leg ends unused (`#abandonPrefill`). The ticket stays
   * live for the caller to lease again. Returns the prompt tokens its lease carried.
   */
  failDecode(ticket: string, t: Ticket, failure: FailureKind, now: number): number {
    const { board, claims } = this.#parts;
    const promptTokens = board.release(ticket, false, now)?.promptTokens ?? 0;
    claims.unclaim(t.claim);
    this.#blame(t.claim.slot, failure, now);
    if (t.prefill) this.#abandonPrefill(ticket, t.prefill, now);
    return promptTokens;
  }

  /**
   * The ticket's prefill leg failed: undone, the failure counted against its origin, and the
   * decode lease taken again with the prompt's prefill work. Returns the decode leg's claim (it
   * serves alone now), or null for an unknown ticket or one without a live prefill leg.
   */
  failPrefill(ticket: string, failure: FailureKind, now: number): Claim | null {
    const t = this.#tickets.get(ticket);
    if (!t?.prefill) return null;
    const { board, claims } = this.#parts;
    const { claim, prefill } = t;
    board.release(prefillLeaseKey(ticket), false, now);
    claims.unclaim(prefill);
    this.#blame(prefill.slot, failure, now);
    this.#prefillFailed++;
    t.prefill = null;
    const promptTokens = board.release(ticket, false, now)?.promptTokens ?? 0;
    this.#leaseBoard(ticket, claim.slot, claim.hashes, promptTokens, claim.matchedTokens, now);
    return claim;
  }

  /**
   * The ticket will not be used: it ends with both legs undone as if never routed, nobody
   * blamed. False for an unknown ticket.
   */
  abandon(ticket: string, now: number): boolean {
    const t = this.#tickets.take(ticket);
    if (!t) return false;
    const { board, claims } = this.#parts;
    board.release(ticket, false, now);
    board.onAbandon(t.claim.slot);
    claims.unclaim(t.claim);
    if (t.prefill) this.#abandonPrefill(ticket, t.prefill, now);
    return true;
  }

  /** A prefill leg ends unused: release it, take its claim back, blame nobody. */
  #abandonPrefill(ticket: string, prefill: Claim, now: number): void {
    const { board, claims } = this.#parts;
    board.release(prefillLeaseKey(ticket), false, now);
    board.onAbandon(prefill.slot);
    claims.unclaim(prefill);
  }

  /**
   * The ticket's request ended with `outcome`: the ticket ends, a failure before the first byte
   * takes the decode claim back, and a live prefill leg ends with it (`#settlePrefill`).
   * Capacity is learned from the `cachedTokens` of whichever origin prefilled: the prefill
   * leg's (`outcome.prefill`) when disaggregated. False for an unknown ticket.
   */
  settle(ticket: string, outcome: Outcome, now: number): boolean {
    const t = this.#tickets.take(ticket);
    if (!t) return false;
    const { board, claims, capacity } = this.#parts;
    const { claim, prefill } = t;
    const { ok, failure } = outcome;
    const beforeFirstByte = !ok && failure !== undefined && failure !== "stream";
    board.release(ticket, !beforeFirstByte, now);
    if (beforeFirstByte) claims.unclaim(claim);
    if (failure !== undefined) this.#blame(claim.slot, failure, now);
    if (prefill) this.#settlePrefill(ticket, prefill, outcome, beforeFirstByte, now);
    if (ok) {
      board.onSuccess(claim.slot);
      // A decode origin counts the KV it was sent as cached: only its own prefill teaches.
      if (!prefill && outcome.cachedTokens !== undefined) {
        capacity.learn(claim.slot, claim, outcome, claims.feed === "router");
      }
      if (!prefill) this.#learnSpeed(claim.slot, t.queuedTokens, outcome, now);
      this.#learnBytesPerToken(t.promptBytes, outcome, now);
    } else if (failure === undefined) {
      // Neither success nor the origin's fault (client left, 4xx): a half-open probe that ends
      // this way proves nothing, so the next request may probe.
      board.onAbandon(claim.slot);
    }
    return true;
  }

  /**
   * A request ended with its prefill leg live. The leg prefilled if it answered (its usage
   * came back) or the decode got past its first byte (it needed the KV), and then counts as a
   * success; if the decode failed before its first byte and nothing came back from the leg,
   * its claim is taken back. A client that left proves nothing either way.
   */
  #settlePrefill(
    ticket: string,
    prefill: Claim,
    outcome: Outcome,
    decodeBeforeFirstByte: boolean,
    now: number,
  ): void {
    const { board, claims, capacity } = this.#parts;
    const answered = outcome.prefill !== undefined;
    const prefilled = answered || !decodeBeforeFirstByte;
    board.release(prefillLeaseKey(ticket), prefilled, now);
    if (!prefilled) claims.unclaim(prefill);
    if (answered || outcome.ok || outcome.failure === "stream") {
      board.onSuccess(prefill.slot);
      const usage = outcome.prefill;
      if (usage?.cachedTokens !== undefined) {
        capacity.learn(prefill.slot, prefill, usage, claims.feed === "router");
      }
    } else {
      board.onAbandon(prefill.slot);
    }
  }

  /**
   * A request served whole with its time to first token measured: a sample of the origin's
   * prefill speed (speed-learner.ts), the board's queue draining at the new speed. Its own
   * work is what the engine prefilled (its `cached_tokens`, else the claim's prediction).
   */
  #learnSpeed(slot: Slot, queuedTokens: number, outcome: Outcome, now: number): void {
    const { ttftMs, promptTokens } = outcome;
    if (ttftMs === undefined || promptTokens === undefined) return;
    const { pool, speeds } = this.#parts;
    const cached = outcome.cachedTokens ?? 0;
    const workTokens = prefillWork(cached, promptTokens, pool.prefillAttentionTokens);
    if (speeds.observe(slot, { ttftMs, workTokens, queuedTokens }, now)) {
      drainAtLearnedSpeeds(this.#parts, now);
    }
  }

  /**
   * A request whose canonical bytes the caller sent came back with the engine's prompt tokens
   * (the prefill leg's when disaggregated): a sample of the pool's bytes per token
   * (bytes-per-token.ts), which the index's tokens per chunk follow.
   */
  #learnBytesPerToken(promptBytes: number | undefined, outcome: Outcome, now: number): void {
    const tokens = outcome.prefill?.promptTokens ?? outcome.promptTokens;
    if (promptBytes === undefined || tokens === undefined) return;
    if (this.#parts.bytesPerToken.observe(promptBytes, tokens, now)) retoken(this.#parts);
  }

  #blame(slot: Slot, kind: FailureKind, now: number): void {
    this.#failures[kind] = (this.#failures[kind] ?? 0) + 1;
    this.#parts.board.onFailure(slot, now);
  }

  /** The ticket's first token came back: its prefill, and a live prefill leg's, is done. */
  firstToken(ticket: string, now: number): boolean {
    const { board } = this.#parts;
    if (this.#tickets.get(ticket)?.prefill) board.firstToken(prefillLeaseKey(ticket), now);
    return board.firstToken(ticket, now);
  }

  /** Release leases whose completion never came. Returns how many tickets that ended. */
  expire(now: number): number {
    let requests = 0;
    for (const lease of this.#parts.board.expire(now)) {
      // A prefill lease is taken with its ticket's and no later, so the two expire together.
      if (ticketOfPrefillLease(lease.ticket) === null && this.#tickets.take(lease.ticket))
        requests++;
    }
    return requests;
  }

  /**
   * The origin in `slot` left with its leases: its tickets go, or their completions would land
   * on the slot's next origin; their prefill legs elsewhere end, and prefill legs it served end.
   */
  dropSlot(slot: Slot): void {
    for (const key of this.#tickets.dropSlot(slot)) this.#parts.board.drop(key);
  }

  /** A restored router starts with no tickets (and a fresh board). */
  clear(): void {
    this.#tickets.clear();
  }

  /** Test-only: throws unless the leases are exactly the live tickets' legs. */
  checkInvariants(): void {
    this.#tickets.checkInvariants(this.#parts.board);
  }
}
