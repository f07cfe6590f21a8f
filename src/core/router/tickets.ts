/**
 * Live tickets: the requests a router routed and has not yet seen completed, cancelled or
 * expired, nor lost with their origin, each with its claim. A ticket id is the holder's prefix
 * (unique per start of the holder) and a counter.
 */
import type { Lease } from "../load-board/load-board.ts";
import type { Slot } from "../origin-indexes.ts";
import type { Claim } from "./claim-index.ts";

export class Tickets {
  readonly #prefix: string;
  readonly #claims = new Map<string, Claim>();
  #issued = 0;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** A ticket id never issued by this holder before. */
  issue(): string {
    return `${this.#prefix}${(this.#issued++).toString(36)}`;
  }

  get(ticket: string): Claim | undefined {
    return this.#claims.get(ticket);
  }

  set(ticket: string, claim: Claim): void {
    this.#claims.set(ticket, claim);
  }

  /** The ticket's claim, and the ticket is no longer live; undefined if it was not. */
  take(ticket: string): Claim | undefined {
    const claim = this.#claims.get(ticket);
    this.#claims.delete(ticket);
    return claim;
  }

  /** Drop every ticket on `slot` (its origin left). */
  dropSlot(slot: Slot): void {
    for (const [ticket, claim] of this.#claims) {
      if (claim.slot === slot) this.#claims.delete(ticket);
    }
  }

  clear(): void {
    this.#claims.clear();
  }

  /** Test-only: throws unless every live ticket, and only they, hold a lease at their slot. */
  checkInvariants(leases: { outstanding: number; lookup(ticket: string): Lease | undefined }) {
    if (this.#claims.size !== leases.outstanding) {
      throw new Error(`tickets: ${this.#claims.size} live but ${leases.outstanding} leases`);
    }
    for (const [ticket, claim] of this.#claims) {
      if (leases.lookup(ticket)?.origin !== claim.slot)
        throw new Error(`tickets: ${ticket} has no lease at its slot`);
    }
  }
}
