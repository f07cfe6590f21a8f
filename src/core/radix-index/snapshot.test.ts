/** Snapshot round trips (exact, including future behaviour) and rejection of damaged bytes. */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReferenceModel } from "../test-support/radix-reference-model.ts";
import { allMatches, runOp, scenarioArb } from "../test-support/radix-scenarios.ts";
import { RadixIndex } from "./radix-index.ts";

function withoutBytes(index: RadixIndex) {
  const { bytes: _, ...rest } = index.stats();
  return rest;
}

function sample(): RadixIndex {
  const index = new RadixIndex({ maxOrigins: 3, maxChunks: 100 });
  index.insert([1, 2, 3, 4], 0, 1);
  index.insert([1, 2, 9], 1, 2);
  index.setCapacity(2, 7);
  return index;
}

describe("RadixIndex snapshot", () => {
  it("round-trips exactly: same matches and stats, same results for the same future ops", () => {
    fc.assert(
      fc.property(scenarioArb(60), fc.nat(), (sc, cut) => {
        const split = cut % (sc.ops.length + 1);
        const a = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
        for (const op of sc.ops.slice(0, split)) runOp(a, sc, op);
        const bytes = a.snapshot();
        const b = RadixIndex.restore(bytes);
        b.checkInvariants();
        expect(withoutBytes(b)).toEqual(withoutBytes(a));
        expect(allMatches(b, sc)).toEqual(allMatches(a, sc));
        expect(b.snapshot()).toEqual(bytes);
        for (const op of sc.ops.slice(split)) {
          expect(runOp(b, sc, op)).toEqual(runOp(a, sc, op));
        }
        b.checkInvariants();
        expect(b.snapshot()).toEqual(a.snapshot());
      }),
      { numRuns: 200 },
    );
  });

  it("enforces a lower maxChunks given at restore with the budget rule", () => {
    fc.assert(
      fc.property(scenarioArb(), fc.integer({ min: 1, max: 10 }), (sc, maxChunks) => {
        const a = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
        const model = new ReferenceModel(sc.maxOrigins, sc.maxChunks);
        for (const op of sc.ops) {
          runOp(a, sc, op);
          runOp(model, sc, op);
        }
        const b = RadixIndex.restore(a.snapshot(), { maxChunks });
        model.maxChunks = maxChunks;
        model.enforceBudget();
        b.checkInvariants();
        expect(allMatches(b, sc)).toEqual(allMatches(model, sc));
      }),
      { numRuns: 100 },
    );
  });

  it("keeps capacities of origins that own nothing", () => {
    const b = RadixIndex.restore(sample().snapshot());
    expect(b.capacity(2)).toBe(7);
    expect(b.stats().perOrigin).toEqual(sample().stats().perOrigin);
  });

  it("rejects any single corrupted byte", () => {
    const bytes = sample().snapshot();
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (at, flip) => {
        const bad = bytes.slice();
        bad[at]! ^= flip;
        expect(() => RadixIndex.restore(bad)).toThrow(Error);
      }),
      { numRuns: 200 },
    );
  });

  it("rejects truncated or extended bytes", () => {
    const bytes = sample().snapshot();
    for (let n = 0; n < bytes.length; n++) {
      expect(() => RadixIndex.restore(bytes.subarray(0, n))).toThrow(/truncated|length/);
    }
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expect(() => RadixIndex.restore(longer)).toThrow(/length/);
  });

  it("rejects another version and another format by name", () => {
    const bytes = sample().snapshot();
    const v2 = bytes.slice();
    v2[4] = 2;
    expect(() => RadixIndex.restore(v2)).toThrow(/unsupported version 2/);
    const other = bytes.slice();
    other[0] = 0;
    expect(() => RadixIndex.restore(other)).toThrow(/magic/);
  });

  it("rejects a maxOrigins override too small for the stored origins", () => {
    expect(() => RadixIndex.restore(sample().snapshot(), { maxOrigins: 1 })).toThrow(/origin 1/);
  });

  it("restores an empty index", () => {
    const empty = new RadixIndex({ maxOrigins: 1, maxChunks: 1 });
    const b = RadixIndex.restore(empty.snapshot());
    expect(withoutBytes(b)).toEqual(withoutBytes(empty));
  });
});
