/**
 * An edge replica's records waiting for its coordinator, and the batch in flight.
 *
 * Records queue in order; a request that ends while its route record still waits, with no
 * other record of it queued since, merges into it (one record, `outcome` set). A batch takes up to `MAX_BATCH_RECORDS` of the oldest and
 * gets the next id; until it is acknowledged, every sync sends that same batch again (same id,
 * same records), and new records wait behind it, so a coordinator that applies each batch id
 * once applies every record once, whichever answers were lost. While nothing is acknowledged
 * the queue holds at most `maxRecords`; past that the oldest waiting record is dropped and
 * counted (a long outage loses its oldest reports, never the batch in flight).
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
  #inFlight: Batch | null = null;
  #nextId = 1;
  /** Records dropped because the queue was full. */
  dropped = 0;

  constructor(maxRecords: number) {
    this.#maxRecords = maxRecords;
  }

  /** Records waiting (not counting the batch in flight). */
  get size(): number {
    return this.#waiting.length;
  }

  /** When the oldest waiting record was queued; null when none waits. */
  get oldestAt(): number | null {
    return this.#waiting[0]?.at ?? null;
  }

  /** The batch sent and not yet acknowledged. */
  get inFlight(): Batch | null {
    return this.#inFlight;
  }

  push(record: UpRecord, effects: SignedEffect[], now: number): void {
    const entry: Waiting = { record, effects, at: now };
    this.#waiting.push(entry);
    // An end may merge into its route record only if nothing of its ticket came between.
    if (record.t === "route") this.#routes.set(record.ticket, entry);
    else this.#routes.delete(record.ticket);
    while (this.#waiting.length > this.#maxRecords) {
      const old = this.#waiting.shift() as Waiting;
      if (old.record.t === "route") this.#routes.delete(old.record.ticket);
      this.dropped++;
    }
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
    if (this.#waiting.length === 0) return null;
    const taken = this.#waiting.splice(0, MAX_BATCH_RECORDS);
    for (const w of taken) if (w.record.t === "route") this.#routes.delete(w.record.ticket);
    this.#inFlight = { id: this.#nextId++, records: taken.map((w) => w.record) };
    return this.#inFlight;
  }

  /** The batch in flight was applied. */
  acknowledge(): void {
    this.#inFlight = null;
  }

  /** The load effects of the records still waiting (not in any batch). */
  *waitingEffects(): Iterable<SignedEffect> {
    for (const w of this.#waiting) yield* w.effects;
  }
}
