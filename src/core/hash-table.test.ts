import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HashTable } from "./hash-table.ts";

/**
 * Indices 0..POOL-1 hold keys; the model is a Map from key to index. A pool of 8 keeps the table
 * at 16 slots and half full, so probe chains often wrap past its end, where backward shift is
 * easiest to get wrong.
 */
const POOL = 8;
const KEYS = 40;

const op = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), key: fc.integer({ min: 0, max: KEYS }) }),
  // Removes the held key at position `key` modulo the count, when any is held.
  fc.record({ kind: fc.constant("remove" as const), key: fc.nat() }),
  // Large, structured 53-bit values (multiples of 2^32) as well.
  fc.record({
    kind: fc.constant("insert" as const),
    key: fc.integer({ min: 1, max: 30 }).map((k) => k * 2 ** 32),
  }),
);

describe("HashTable", () => {
  it("agrees with a Map under any inserts and backward-shift removals", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 20, maxLength: 200, size: "max" }),
        fc.nat(POOL),
        (ops, initial) => {
          const keys = new Float64Array(POOL);
          const table = new HashTable(initial);
          const model = new Map<number, number>();
          const free = Array.from({ length: POOL }, (_, i) => POOL - 1 - i);
          for (const { kind, key } of ops) {
            if (kind === "insert" && !model.has(key) && free.length > 0) {
              const i = free.pop() as number;
              keys[i] = key;
              table.insert(i, keys);
              model.set(key, i);
            } else if (kind === "remove" && model.size > 0) {
              const [held, i] = [...model.entries()][key % model.size] as [number, number];
              table.remove(i, keys);
              model.delete(held);
              free.push(i);
            }
            table.checkInvariants(keys);
            if (table.count !== model.size) return false;
            for (const [k, i] of model) if (table.find(k, keys) !== i) return false;
            for (let k = 0; k <= KEYS; k++) {
              if (table.find(k, keys) !== (model.get(k) ?? -1)) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });

  it("finds nothing for keys it never holds, NaN and fractions included, and never throws", () => {
    const keys = new Float64Array([5, 7]);
    const table = new HashTable(2);
    table.insert(0, keys);
    table.insert(1, keys);
    for (const k of [Number.NaN, -1, 5.5, 2 ** 53, Number.POSITIVE_INFINITY]) {
      expect(table.find(k, keys)).toBe(-1);
    }
    expect(table.find(7, keys)).toBe(1);
  });

  it("clear empties it and keeps it usable", () => {
    const keys = new Float64Array([1, 2, 3]);
    const table = new HashTable(3);
    for (let i = 0; i < 3; i++) table.insert(i, keys);
    table.clear();
    expect(table.count).toBe(0);
    expect(table.find(2, keys)).toBe(-1);
    table.insert(2, keys);
    expect(table.find(3, keys)).toBe(2);
    table.checkInvariants(keys);
  });

  it("checkInvariants catches an index held twice and a broken probe chain", () => {
    const keys = new Float64Array([1, 2]);
    const twice = new HashTable(2);
    twice.insert(0, keys);
    twice.insert(0, keys);
    expect(() => twice.checkInvariants(keys)).toThrow(/twice/);

    const hole = new HashTable(2);
    hole.insert(0, keys);
    keys[0] = 99; // the key changed while in the table: its home moved
    expect(() => hole.checkInvariants(keys)).toThrow(/unreachable|finds another/);
  });
});
