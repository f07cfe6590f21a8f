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

/**
 * Whether two builds of an entry (at `thenAt` and `nowAt`) hold the same value: plain data
 * compared field by field, an `ageMs` as the time it was taken. No strings built: a
 * coordinator compares every origin at every build (1.6 ms a build at 256 origins with
 * JSON.stringify, the answer's own cost many times over).
 */
function same(then: unknown, thenAt: number, now: unknown, nowAt: number): boolean {
  if (then === now) return true;
  if (typeof then !== "object" || typeof now !== "object" || then === null || now === null) {
    return false;
  }
  const a = then as Record<string, unknown>;
  const b = now as Record<string, unknown>;
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  for (const key of keys) {
    if (key === "ageMs") {
      if (thenAt - (a[key] as number) !== nowAt - (b[key] as number)) return false;
    } else if (!same(a[key], thenAt, b[key], nowAt)) {
      return false;
    }
  }
  return true;
}

export class LoadChanges {
  #seq = 0;
  readonly #held = new Map<string, { entry: OriginLoadEntry; at: number; seq: number }>();

  /** The number of the latest change (0: none yet). */
  get seq(): number {
    return this.#seq;
  }

  /** Number the entries of `vector` that changed since the last build; forget origins gone. */
  mark(vector: readonly OriginLoadEntry[], now: number): void {
    const present = new Set<string>();
    for (const e of vector) {
      present.add(e.id);
      const held = this.#held.get(e.id);
      if (held && same(held.entry, held.at, e, now)) continue;
      this.#held.set(e.id, { entry: e, at: now, seq: ++this.#seq });
    }
    for (const id of this.#held.keys()) if (!present.has(id)) this.#held.delete(id);
  }

  /** The entries of `vector` (as just marked) changed after number `seq`. */
  after(vector: readonly OriginLoadEntry[], seq: number): OriginLoadEntry[] {
    return vector.filter((e) => (this.#held.get(e.id)?.seq ?? Number.POSITIVE_INFINITY) > seq);
  }
}
