/**
 * @module
 * What either coordination mode hands the rest of the Worker for one request (../front.ts): the
 * decision (`Routed`), the `Ledger` that failover and the request's end report to, whichever
 * router issued the ticket, and the name a request waits under in admission (`waiterId`). Both
 * modes build these; neither imports the other.
 */
import type { FailureKind, RouteDecision } from "../../../core/router/router-types.ts";
import type { Coordination } from "../../../core/settings/edge-settings.ts";
import type { RequestReport } from "../../request-record/request-report.ts";

/**
 * Where failover and the end of a routed request are reported, to whichever router issued the
 * ticket. The end is the request's `RequestReport`; a report the object cannot take now (the
 * Worker routed alone, or the call failed) waits in `pendingReports` for the next completion.
 */
export interface Ledger {
  /** Resolves to the prompt tokens `next` holds, or null when the router could not say. */
  reroute(ticket: string, failure: FailureKind, next: string): Promise<number | null>;
  /**
   * A disaggregated request's prefill leg failed (not a 4xx): its decode origin serves it
   * alone. Resolves to the prompt tokens the decode origin holds, or null.
   */
  prefillFailed(ticket: string, failure: FailureKind): Promise<number | null>;
  complete(ticket: string, report: RequestReport): Promise<void>;
  /** The ticket was never used: release it blaming nobody. */
  cancel(ticket: string): Promise<void>;
}

export interface Routed {
  readonly decision: RouteDecision;
  readonly ledger: Ledger;
  /** The object's answer time (ms), null when the Worker routed alone. */
  readonly objectMs: number | null;
  /** The `fallback-*` reason when the Worker routed alone, else null. */
  readonly fallback: string | null;
  /** Who decided: the pool's object (or this isolate's fallback), or this isolate's replica. */
  readonly coordination: Coordination;
  /** Edge mode: how old the replica's view was (ms since its last sync answer), else null. */
  readonly viewAgeMs: number | null;
}

/** A request that may wait in the pool's admission: its client's abort signal. */
export interface Waiter {
  readonly signal?: AbortSignal | undefined;
}

/**
 * A held request's name in admission's books: made here, unique, never the client's
 * `x-request-id` (a client may send one id twice, a retry, and two requests of one name would
 * collide in admission's books).
 */
export function waiterId(): string {
  return crypto.randomUUID();
}
