import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BatchLedger, type BatchLedger as Ledger } from "./batch-ledger.ts";

const W = 300_000;
const AHEAD = 5_000;
const T0 = 1_700_000_000_000;

/** check, and record when it says apply: what the Durable Object does with each batch. */
function deliver(ledger: Ledger, origin: string, id: string, at: number, now: number) {
  const verdict = ledger.check(origin, id, at, now);
  if (verdict === "apply") ledger.record(origin, id, at, now);
  return verdict;
}

describe("BatchLedger", () => {
  it("applies a batch once: its replay is a duplicate, also after newer batches", () => {
    const ledger = new BatchLedger();
    expect(deliver(ledger, "a", "batch-01", T0, T0)).toBe("apply");
    expect(deliver(ledger, "a", "batch-01", T0, T0 + 5_000)).toBe("duplicate");
    expect(deliver(ledger, "a", "batch-02", T0 + 1_000, T0 + 6_000)).toBe("apply");
    expect(deliver(ledger, "a", "batch-01", T0, T0 + 35_000)).toBe("duplicate");
  });

  it("a batch made before the origin's last applied one is stale, whatever its kind", () => {
    const ledger = new BatchLedger();
    deliver(ledger, "a", "batch-02", T0 + 1_000, T0 + 1_000);
    expect(deliver(ledger, "a", "batch-01", T0, T0 + 2_000)).toBe("stale");
    expect(deliver(ledger, "a", "batch-03", T0 + 1_000, T0 + 2_000)).toBe("stale");
    // Ordering is per origin: another origin's batches are not compared.
    expect(deliver(ledger, "b", "batch-04", T0, T0 + 2_000)).toBe("apply");
    // What a refused sender is told to make its next batch later than.
    expect([ledger.lastAt("a"), ledger.lastAt("b"), ledger.lastAt("c")]).toEqual([
      T0 + 1_000,
      T0,
      null,
    ]);
  });

  it("a batch made before the window is stale; one made more than 5 s ahead of now is refused", () => {
    const ledger = new BatchLedger();
    expect(deliver(ledger, "a", "batch-01", T0 - W - 1, T0)).toBe("stale");
    expect(deliver(ledger, "a", "batch-02", T0 + AHEAD + 1, T0)).toBe("ahead");
    expect(deliver(ledger, "a", "batch-03", T0 - W, T0)).toBe("apply");
    expect(deliver(ledger, "a", "batch-04", T0 + AHEAD, T0)).toBe("apply");
  });

  it("one future-dated batch does not lock the origin's reports out (issue 24)", () => {
    // The scenario: a signed batch with at = now + 45 s, then the reporter's own batches
    // every 500 ms. Applied, it made the next 90 of them stale and the origin's load faded.
    const ledger = new BatchLedger();
    expect(deliver(ledger, "a", "batch-ahead", T0 + 45_000, T0)).toBe("ahead");
    for (let i = 1; i <= 90; i++) {
      expect(deliver(ledger, "a", `batch-${i}`, T0 + i * 500, T0 + i * 500)).toBe("apply");
    }
  });

  it("a batch made ahead within the skew holds off the origin's batches for at most the skew", () => {
    const ledger = new BatchLedger();
    expect(deliver(ledger, "a", "batch-ahead", T0 + AHEAD, T0)).toBe("apply");
    expect(deliver(ledger, "a", "batch-01", T0 + AHEAD, T0 + AHEAD)).toBe("stale");
    expect(deliver(ledger, "a", "batch-02", T0 + AHEAD + 1, T0 + AHEAD + 1)).toBe("apply");
  });

  it("at the id bound the oldest id goes, and its replay is refused as stale, never applied", () => {
    const ledger = new BatchLedger({ maxIdsPerOrigin: 3 });
    for (let i = 0; i < 5; i++) deliver(ledger, "a", `batch-0${i}`, T0 + i, T0 + i);
    expect(ledger.size).toEqual({ origins: 1, ids: 3 });
    expect(deliver(ledger, "a", "batch-00", T0, T0 + 10)).toBe("stale");
    expect(deliver(ledger, "a", "batch-02", T0 + 2, T0 + 10)).toBe("duplicate");
  });

  it("forgets ids and whole origins once their batches leave the window", () => {
    const ledger = new BatchLedger();
    for (let i = 0; i < 10; i++) deliver(ledger, "quiet", `q-batch-${i}`, T0 + i, T0 + i);
    deliver(ledger, "busy", "b-batch-0", T0 + 100_000, T0 + 100_000);
    deliver(ledger, "busy", "b-batch-1", T0 + W + 50_000, T0 + W + 50_000);
    expect(ledger.size).toEqual({ origins: 1, ids: 2 });
    deliver(ledger, "busy", "b-batch-2", T0 + W + 150_000, T0 + W + 150_000);
    expect(ledger.size).toEqual({ origins: 1, ids: 2 });
  });

  it("restores persisted marks: the last batch is a duplicate, older ones stale", () => {
    const ledger = new BatchLedger();
    ledger.restore(
      [
        ["a", { id: "batch-09", at: T0 }],
        ["gone", { id: "batch-01", at: T0 - W - 10_000 }],
      ],
      T0 + 1_000,
    );
    expect(ledger.size).toEqual({ origins: 1, ids: 1 });
    expect(deliver(ledger, "a", "batch-09", T0, T0 + 1_000)).toBe("duplicate");
    expect(deliver(ledger, "a", "batch-08", T0 - 1, T0 + 1_000)).toBe("stale");
    expect(deliver(ledger, "a", "batch-10", T0 + 1, T0 + 1_000)).toBe("apply");
  });

  it("refuses misuse: recording a batch that is not to be applied, bad options", () => {
    const ledger = new BatchLedger();
    ledger.record("a", "batch-01", T0, T0);
    expect(() => ledger.record("a", "batch-01", T0, T0)).toThrow(/duplicate/);
    expect(() => new BatchLedger({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => new BatchLedger({ aheadMs: W + 1 })).toThrow(/aheadMs/);
    expect(() => new BatchLedger({ maxIdsPerOrigin: 0.5 })).toThrow(/maxIdsPerOrigin/);
  });

  it("property: against a model that never forgets, every batch applies at most once", () => {
    // Steps: the clock moves on, then an origin sends a new batch or someone replays an old one.
    // Whole seconds, so batches made at the same time as another are common.
    const seconds = (min: number, max: number) => fc.integer({ min, max }).map((s) => s * 1000);
    const step = fc.record({
      advance: seconds(0, 120),
      origin: fc.constantFrom("a", "b"),
      replay: fc.option(fc.nat(), { freq: 2 }),
      skew: fc.oneof(seconds(-W / 1000 - 20, W / 1000 + 20), seconds(-10, 10)),
    });
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 80 }),
        fc.integer({ min: 1, max: 6 }),
        (steps, max) => {
          const ledger = new BatchLedger({ maxIdsPerOrigin: max });
          const made: { origin: string; id: string; at: number }[] = [];
          const applied: { origin: string; id: string; at: number }[] = [];
          let now = T0;
          for (const s of steps) {
            now += s.advance;
            const batch =
              s.replay !== null && made.length > 0
                ? (made[s.replay % made.length] as (typeof made)[number])
                : { origin: s.origin, id: `batch-${made.length}`, at: now + s.skew };
            if (batch.id === `batch-${made.length}`) made.push(batch);
            const mine = applied.filter((b) => b.origin === batch.origin);
            const expectApply =
              now - batch.at <= W &&
              batch.at - now <= AHEAD &&
              !mine.some((b) => b.id === batch.id) &&
              mine.every((b) => batch.at > b.at);
            const verdict = deliver(ledger, batch.origin, batch.id, batch.at, now);
            expect(verdict === "apply").toBe(expectApply);
            if (verdict === "apply") applied.push(batch);
            if (verdict === "duplicate") expect(mine.some((b) => b.id === batch.id)).toBe(true);
            // A retry of one of the origin's last `max` batches, within the window, is a duplicate.
            const recent = mine.slice(-max).some((b) => b.id === batch.id);
            const inWindow = now - batch.at <= W && batch.at - now <= AHEAD;
            if (recent && inWindow) expect(verdict).toBe("duplicate");
            // Refused as ahead only when it is, so it can never lock later batches out.
            expect(verdict === "ahead").toBe(batch.at - now > AHEAD);
          }
          expect(ledger.size.ids).toBeLessThanOrEqual(2 * max);
        },
      ),
      { numRuns: 300 },
    );
  });
});
