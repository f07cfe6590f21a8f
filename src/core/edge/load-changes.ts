/**
 * Which origins' load entries changed, numbered, so a coordinator sends an entry only to a
 * replica that has not seen its current value (issue 23, defect G: every answer carried the
 * whole vector, ~245 B an origin, 62.7 KB at the 256-origin cap, whether anything moved or not).
 *
 * Each time the coordinator builds its vector (a sync answer, a push frame) `mark` compares
 * every entry with the last value built and gives each changed entry the next number of one
 * sequence. A replica that applied every entry up to number `n` (its view's `load`) needs only
 * the entries numbered after `n`: `after(n)`. Numbers are absolute values, not deltas, so an
 * entry sent twice (a frame and an answer crossing) does no harm, and a change made and undone
 * between two builds is seen by nobody, rightly.
 *
 * Ages are not changes: an engine report's and a measured prefill's `ageMs` grow with the clock,
 * so they are compared as the time they were taken (`now - ageMs`); a replica ages an entry from
 * when it received it (load-overlay.ts). O(origins) per build.
 */
import type { OriginLoadEntry } from "./sync-protocol.ts";

/** The entry without its clock: what counts as a change. */
function unclocked(e: OriginLoadEntry, now: number): string {
  const engine = e.engine && { ...e.engine, ageMs: now - e.engine.ageMs };
  const prefill = e.measuredPrefill && {
    ...e.measuredPrefill,
    ageMs: now - e.measuredPrefill.ageMs,
  };
  return JSON.stringify({ ...e, engine, measuredPrefill: prefill });
}

export class LoadChanges {
  #seq = 0;
  readonly #held = new Map<string, { value: string; seq: number }>();

  /** The number of the latest change (0: none yet). */
  get seq(): number {
    return this.#seq;
  }

  /** Number the entries of `vector` that changed since the last build; forget origins gone. */
  mark(vector: readonly OriginLoadEntry[], now: number): void {
    const present = new Set<string>();
    for (const e of vector) {
      present.add(e.id);
      const value = unclocked(e, now);
      const held = this.#held.get(e.id);
      if (held?.value !== value) this.#held.set(e.id, { value, seq: ++this.#seq });
    }
    for (const id of this.#held.keys()) if (!present.has(id)) this.#held.delete(id);
  }

  /** The entries of `vector` (as just marked) changed after number `seq`. */
  after(vector: readonly OriginLoadEntry[], seq: number): OriginLoadEntry[] {
    return vector.filter((e) => (this.#held.get(e.id)?.seq ?? Number.POSITIVE_INFINITY) > seq);
  }
}
