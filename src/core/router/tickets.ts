/**
 * Live tickets: the requests a router routed and has not yet seen completed, cancelled or
 * expired, nor lost with their origin, each with its claim and, while it is disaggregated, its
 * prefill leg's claim. A ticket id is the holder's prefix (unique per start of the holder) and
 * a counter.
 *
 * Each ticket holds one load-board lease under its id at its origin; a prefill leg holds a
 * second under `prefillLeaseKey(ticket)` at the prefill origin. Ids end in a base-36 digit and
 * that key in `~p`, so the two never collide.
 */
import type { Lease } from "../load-board/load-board.ts";
import type { Slot } from "../origin-indexes.ts";
import type { Claim } from "./claim-index.ts";

export interface Ticket {
  /** The origin serving the request (alone, or as the decode leg) and what it was claimed. */
  readonly claim: Claim;
  /** The prefill leg's origin and claim while the request is disaggregated, else null. */
  prefill: Claim | null;
  /**
   * Prefill work the router estimated was queued at the claim's origin when it leased it: what
   * stood before the request's own prefill, for the speed learner (speed-learner.ts).
   */
  readonly queuedTokens: number;
  /** The canonical prompt's bytes when the caller sent them (for bytes-per-token.ts). */
  readonly promptBytes?: number | undefined;
}

const PREFILL_SUFFIX = "~p";

/** The load-board key of a ticket's prefill lease. */
export function prefillLeaseKey(ticket: string): string {
  return `${ticket}${PREFILL_SUFFIX}`;
}

/** The ticket a prefill lease key belongs to, or null for a ticket's own key. */
export function ticketOfPrefillLease(key: string): string | null {
  return key.endsWith(PREFILL_SUFFIX) ? key.slice(0, -PREFILL_SUFFIX.length) : null;
}

export class Tickets {
  readonly #prefix: string;
  readonly #live = new Map<string, Ticket>();
  #issued = 0;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** A ticket id never issued by this holder before. */
  issue(): string {
    return `${this.#prefix}${(this.#issued++).toString(36)}`;
  }

  get size(): number {
    return this.#live.size;
  }

  get(ticket: string): Ticket | undefined {
    return this.#live.get(ticket);
  }

  set(
    ticket: string,
    claim: Claim,
    prefill: Claim | null,
    queuedTokens: number,
    promptBytes?: number,
  ): void {
    this.#live.set(ticket, { claim, prefill, queuedTokens, promptBytes });
  }

  /** The ticket, and it is no longer live; undefined if it was not. */
  take(ticket: string): Ticket | undefined {
    const t = this.#live.get(ticket);
    this.#live.delete(ticket);
    return t;
  }

  /**
   * The origin in `slot` left (its leases went with it): its tickets are dropped and prefill
   * legs there end. Returns the prefill lease keys of dropped tickets whose prefill leg is on
   * another origin, for the caller to release.
   */
  dropSlot(slot: Slot): string[] {
    const orphans: string[] = [];
    for (const [ticket, t] of this.#live) {
      if (t.claim.slot === slot) {
        this.#live.delete(ticket);
        if (t.prefill && t.prefill.slot !== slot) orphans.push(prefillLeaseKey(ticket));
      } else if (t.prefill?.slot === slot) {
        t.prefill = null;
      }
    }
    return orphans;
  }

  clear(): void {
    this.#live.clear();
  }

  /**
   * Test-only: throws unless the leases are exactly one per live ticket at its slot and one per
   * prefill leg at the prefill origin's slot.
   */
  checkInvariants(leases: { outstanding: number; lookup(key: string): Lease | undefined }) {
    let legs = 0;
    for (const [ticket, t] of this.#live) {
      if (leases.lookup(ticket)?.origin !== t.claim.slot)
        throw new Error(`tickets: ${ticket} has no lease at its slot`);
      if (!t.prefill) continue;
      legs++;
      if (t.prefill.slot === t.claim.slot)
        throw new Error(`tickets: ${ticket} prefills where it decodes`);
      if (leases.lookup(prefillLeaseKey(ticket))?.origin !== t.prefill.slot)
        throw new Error(`tickets: ${ticket}'s prefill has no lease at its slot`);
    }
    if (this.#live.size + legs !== leases.outstanding) {
      throw new Error(
        `tickets: ${this.#live.size} live and ${legs} prefill legs but ${leases.outstanding} leases`,
      );
    }
  }
}
