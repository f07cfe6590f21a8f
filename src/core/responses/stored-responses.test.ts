import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type StoredResponse, StoredResponses } from "./stored-responses.ts";

type Op =
  | { kind: "remember"; id: number; origin: number; dt: number }
  | { kind: "lookup"; id: number; dt: number }
  | { kind: "forget"; id: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("remember" as const),
    id: fc.nat(30),
    origin: fc.nat(3),
    dt: fc.nat(40),
  }),
  fc.record({ kind: fc.constant("lookup" as const), id: fc.nat(30), dt: fc.nat(40) }),
  fc.record({ kind: fc.constant("forget" as const), id: fc.nat(30) }),
);

/** The naive model: every entry ever remembered, the live ones recomputed on each question. */
function modelLookup(log: StoredResponse[], id: string, now: number, max: number, ttl: number) {
  const live = new Map<string, StoredResponse>();
  for (const e of log) {
    live.delete(e.id);
    if (e.origin === "") continue; // a forget
    live.set(e.id, e);
  }
  // The `max` most recently remembered survive the bound; of those, the unexpired answer.
  const kept = [...live.values()].slice(-max);
  const entry = kept.find((e) => e.id === id);
  return entry && now - entry.at < ttl ? entry : null;
}

describe("StoredResponses", () => {
  it("answers as the naive model: bounded, expiring, most recent kept", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 200 }),
        fc.array(op, { maxLength: 120 }),
        (max, ttl, ops) => {
          const map = new StoredResponses({ maxEntries: max, ttlMs: ttl });
          const log: StoredResponse[] = [];
          let now = 0;
          for (const o of ops) {
            if (o.kind === "remember") {
              now += o.dt;
              map.remember(`r${o.id}`, `o${o.origin}`, now);
              log.push({ id: `r${o.id}`, origin: `o${o.origin}`, at: now });
            } else if (o.kind === "lookup") {
              now += o.dt;
              const want = modelLookup(log, `r${o.id}`, now, max, ttl);
              expect(map.lookup(`r${o.id}`, now)).toEqual(want);
            } else {
              map.forget(`r${o.id}`);
              log.push({ id: `r${o.id}`, origin: "", at: now });
            }
            expect(map.size).toBeLessThanOrEqual(max);
          }
        },
      ),
    );
  });

  it("returns what it forgets: the oldest past the bound, then the expired", () => {
    const map = new StoredResponses({ maxEntries: 2, ttlMs: 100 });
    expect(map.remember("a", "o1", 0)).toEqual([]);
    expect(map.remember("b", "o2", 10)).toEqual([]);
    expect(map.remember("a", "o1", 20)).toEqual([]); // remembered again: now the newest
    expect(map.remember("c", "o3", 30)).toEqual([{ id: "b", origin: "o2", at: 10 }]);
    expect(map.expire(120)).toEqual([{ id: "a", origin: "o1", at: 20 }]);
    expect(map.lookup("c", 129)).toEqual({ id: "c", origin: "o3", at: 30 });
    expect(map.lookup("c", 130)).toBeNull();
    expect(map.size).toBe(0);
  });

  it("shrinks to new limits at once", () => {
    const map = new StoredResponses({ maxEntries: 10, ttlMs: 1000 });
    for (let i = 0; i < 10; i++) map.remember(`r${i}`, "o", i);
    const gone = map.configure({ maxEntries: 3, ttlMs: 1000 }, 10);
    expect(gone.map((e) => e.id)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6"]);
    expect([...map.entries()].map((e) => e.id)).toEqual(["r7", "r8", "r9"]);
  });

  it("refuses limits that cannot hold anything, naming the field", () => {
    expect(() => new StoredResponses({ maxEntries: 0, ttlMs: 1 })).toThrow(/maxEntries/);
    expect(() => new StoredResponses({ maxEntries: 1, ttlMs: 0 })).toThrow(/ttlMs/);
  });
});
