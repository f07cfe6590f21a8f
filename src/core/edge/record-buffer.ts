/**
 * An edge replica's records waiting for its coordinator, and the batch in flight.
 *
 * Records queue in order; a request that ends while its route record still waits, with no
 * other record of it queued since, merges into it (one record, `outcome` set). A batch takes up to `MAX_BATCH_RECORDS` of the oldest and
 * gets the next id; until it is acknowledged, every sync sends that same batch again (same id,
 * same records), and new records wait behind it, so a coordinator that applies each batch id
 * once applies every record once, whichever answers were lost. While nothing is acknowledged
 * the queue holds at most `maxRecords`; past that a waiting record is dropped and counted (a
 * long outage loses reports, never the batch in flight): the oldest route or reroute first,
 * whose loss costs the coordinator a claim or a lease it never holds, never an end or a cancel
 * while one of those waits, since a lost end leaves its lease counted as load for `leaseMs`
 * (issue 23, defect D). A request whose route was dropped sends nothing more (its reroutes and
 * end name a ticket the coordinator never leased) unless its route is sent again, as every
 * running request's is after a coordinator restart (replica-sync.ts). Worst case: an end is dropped only when all
 * `maxRecords` waiting records are ends and cancels, i.e. more than `maxRecords` (20,000) of the
 * isolate's requests whose routes reached the coordinator ended while it was away: requests
 * that were in flight when it stopped answering, bounded by the isolate's concurrency.
 * Each record keeps its load effects (load-overlay.ts), which are not sent.
 */
import type { SignedEffect } from "./load-overlay.ts";
import type { UpRecord } from "./sync-protocol.ts";

/** Records per sync, so a backlog after an outage goes in bounded calls. */
export const MAX_BATCH_RECORDS = 4096;

interface Waiting {
  record: UpRecord;
  effects: SignedEffect[];
  at: number;
  /** Dropped in place (removed at the next batch or compaction). */
  dropped: boolean;
}

/** An end or a cancel: what releases a lease at the coordinator. */
function releases(r: UpRecord): boolean {
  return r.t === "end" || r.t === "cancel";
}

export interface Batch {
  readonly id: number;
  readonly records: readonly UpRecord[];
}

export class RecordBuffer {
  readonly #maxRecords: number;
  #waiting: Waiting[] = [];
  /** Waiting route records by ticket, so their end can merge into them. */
  #routes = new Map<string, Waiting>();
  /** Waiting records not dropped. */
  #live = 0;
  /** Every record before this index is dropped or releases a lease (where drops look next). */
  #scan = 0;
  /** Tickets whose route was dropped and whose request has not ended: nothing more is sent. */
  readonly #unsent = new Set<string>();
  #inFlight: Batch | null = null;
  /** The load effects of the batch in flight (counted by the replica until it is applied). */
  #inFlightEffects: SignedEffect[] = [];
  #nextId = 1;
  /** Records dropped because the queue was full. */
  dropped = 0;
  /** Of them, ends and cancels (see the header for when). */
  droppedReleases = 0;

  constructor(maxRecords: number) {
    this.#maxRecords = maxRecords;
  }

  /** Records waiting (not counting the batch in flight). */
  get size(): number {
    return this.#live;
  }

  /** When the oldest waiting record was queued; null when none waits. */
  get oldestAt(): number | null {
    for (const w of this.#waiting) if (!w.dropped) return w.at;
    return null;
  }

  /** The batch sent and not yet acknowledged. */
  get inFlight(): Batch | null {
    return this.#inFlight;
  }

  push(record: UpRecord, effects: SignedEffect[], now: number): void {
    if (record.t === "route") {
      // A route sent again (after a coordinator restart) makes its ticket's records go again.
      this.#unsent.delete(record.ticket);
    } else if (this.#unsent.has(record.ticket)) {
      if (releases(record)) this.#unsent.delete(record.ticket);
      return;
    }
    const entry: Waiting = { record, effects, at: now, dropped: false };
    this.#waiting.push(entry);
    this.#live++;
    // An end may merge into its route record only if nothing of its ticket came between.
    if (record.t === "route") this.#routes.set(record.ticket, entry);
    else this.#routes.delete(record.ticket);
    while (this.#live > this.#maxRecords) this.#dropOne();
  }

  /** Drop the oldest route or reroute waiting, else (all ends and cancels) the oldest. */
  #dropOne(): void {
    const w = this.#waiting;
    while (
      this.#scan < w.length &&
      (w[this.#scan]?.dropped || releases(w[this.#scan]?.record as UpRecord))
    ) {
      this.#scan++;
    }
    const victim = w[this.#scan] ?? (w.find((x) => !x.dropped) as Waiting);
    victim.dropped = true;
    this.#live--;
    this.dropped++;
    const r = victim.record;
    if (releases(r)) this.droppedReleases++;
    if (r.t === "route") {
      this.#routes.delete(r.ticket);
      if (!r.outcome) {
        this.#unsent.add(r.ticket);
        // Requests in flight, so few; bounded all the same (2 x maxRecords) against a ticket
        // that never ends (its end would then be sent and ignored: the coordinator never knew it).
        if (this.#unsent.size > 2 * this.#maxRecords) {
          this.#unsent.delete(this.#unsent.values().next().value as string);
        }
      }
    }
    // Dropped records stay in place until the next batch; compact once they outnumber the rest.
    if (w.length - this.#live > this.#maxRecords) this.#compact();
  }

  #compact(): void {
    this.#waiting = this.#waiting.filter((x) => !x.dropped);
    this.#scan = 0;
  }

  /** The request `ticket` ended: merged into its waiting route record, else queued. */
  end(record: UpRecord & { t: "end" }, effects: SignedEffect[], now: number): void {
    const route = this.#routes.get(record.ticket);
    if (route && route.record.t === "route") {
      route.record = { ...route.record, outcome: record.outcome };
      route.effects.push(...effects);
      this.#routes.delete(record.ticket);
      return;
    }
    this.push(record, effects, now);
  }

  /** The batch to send: the one in flight again, else a new one of the oldest records. */
  batch(): Batch | null {
    if (this.#inFlight) return this.#inFlight;
    if (this.#live === 0) return null;
    this.#compact();
    const taken = this.#waiting.splice(0, MAX_BATCH_RECORDS);
    this.#live -= taken.length;
    for (const w of taken) if (w.record.t === "route") this.#routes.delete(w.record.ticket);
    this.#inFlight = { id: this.#nextId++, records: taken.map((w) => w.record) };
    this.#inFlightEffects = taken.flatMap((w) => w.effects);
    return this.#inFlight;
  }

  /** Tickets whose route record waits or is in the batch in flight (not those dropped). */
  routeTickets(): Set<string> {
    const tickets = new Set<string>();
    for (const r of this.#inFlight?.records ?? []) if (r.t === "route") tickets.add(r.ticket);
    for (const w of this.#waiting) {
      if (!w.dropped && w.record.t === "route") tickets.add(w.record.ticket);
    }
    return tickets;
  }

  /** Batch `id` was applied: it is no longer in flight (an older id changes nothing). */
  acknowledge(id: number): boolean {
    if (this.#inFlight?.id !== id) return false;
    this.#inFlight = null;
    this.#inFlightEffects = [];
    return true;
  }

  /** The load effects of the records not yet applied: the batch in flight's, then the waiting. */
  *pendingEffects(): Iterable<SignedEffect> {
    yield* this.#inFlightEffects;
    for (const w of this.#waiting) if (!w.dropped) yield* w.effects;
  }
}
