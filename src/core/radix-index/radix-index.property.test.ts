/**
 * Property tests: the radix index against the chunk-level reference model, plus direct checks
 * of prefix closure, capacity and budget, and the collision guard on unchained input.
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReferenceModel } from "../test-support/radix-reference-model.ts";
import { allMatches, runOp, type Scenario, scenarioArb } from "../test-support/radix-scenarios.ts";
import { RadixIndex } from "./radix-index.ts";

const RUNS = 300;

function checkAgainstModel(index: RadixIndex, model: ReferenceModel, sc: Scenario): void {
  index.checkInvariants();
  for (let o = 0; o < sc.maxOrigins; o++) expect(index.owned(o)).toBe(model.owned(o));
  const stats = index.stats();
  expect(stats.chunks).toBe(model.chunks);
  expect(stats.ownerships).toBe(model.ownerships);
}

/** Asserted on the index alone, without the model. */
function checkDirect(index: RadixIndex, sc: Scenario): void {
  const matches = allMatches(index, sc);
  const heldByAny = new Set<number>();
  for (let o = 0; o < sc.maxOrigins; o++) {
    let holds = 0;
    sc.paths.forEach((path, i) => {
      if (matches[i]![o] !== path.length) return;
      holds++;
      heldByAny.add(i);
      // Prefix closure: holding a path's last chunk means holding its parent path whole.
      const up = sc.parentPath[i]!;
      if (up >= 0) expect(matches[up]![o]).toBe(sc.paths[up]!.length);
    });
    // Every held chunk is some tree node's last chunk: the held nodes are exactly owned(o).
    expect(holds).toBe(index.owned(o));
    expect(index.owned(o)).toBeLessThanOrEqual(index.capacity(o));
  }
  expect(index.stats().chunks).toBe(heldByAny.size);
  expect(index.stats().chunks).toBeLessThanOrEqual(sc.maxChunks);
}

describe("RadixIndex against the reference model", () => {
  it("agrees on every operation's result, owned counts and chunk counts", () => {
    fc.assert(
      fc.property(scenarioArb(), (sc) => {
        const index = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
        const model = new ReferenceModel(sc.maxOrigins, sc.maxChunks);
        for (const op of sc.ops) {
          expect(runOp(index, sc, op), JSON.stringify(op)).toEqual(runOp(model, sc, op));
          checkAgainstModel(index, model, sc);
        }
        expect(allMatches(index, sc)).toEqual(allMatches(model, sc));
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps ownership prefix-closed and within capacity and budget after every insert", () => {
    fc.assert(
      fc.property(scenarioArb(), (sc) => {
        const index = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
        for (const op of sc.ops) {
          runOp(index, sc, op);
          if (op.kind === "insert" || op.kind === "setCapacity") checkDirect(index, sc);
        }
      }),
      { numRuns: RUNS / 2 },
    );
  });
});

describe("RadixIndex by a single hash (engine events)", () => {
  it("pathOf names the whole held prefix, or null when nobody holds it", () => {
    fc.assert(
      fc.property(scenarioArb(), (sc) => {
        const index = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
        for (const op of sc.ops) runOp(index, sc, op);
        const matches = allMatches(index, sc);
        sc.paths.forEach((path, i) => {
          const held = matches[i]!.some((d) => d === path.length);
          expect(index.pathOf(path.at(-1)!)).toEqual(held ? path : null);
        });
      }),
      { numRuns: RUNS / 2 },
    );
  });

  it("dropFrom(hash, o) is truncate(pathOf(hash), o, depth)", () => {
    fc.assert(
      fc.property(scenarioArb(), fc.nat(), fc.nat(), (sc, pick, who) => {
        const build = () => {
          const index = new RadixIndex({ maxOrigins: sc.maxOrigins, maxChunks: sc.maxChunks });
          for (const op of sc.ops) runOp(index, sc, op);
          return index;
        };
        const byHash = build();
        const byPath = build();
        const path = sc.paths[pick % sc.paths.length]!;
        const origin = who % sc.maxOrigins;
        expect(byHash.dropFrom(path.at(-1)!, origin)).toBe(
          byPath.truncate(path, origin, path.length - 1),
        );
        byHash.checkInvariants();
        expect(allMatches(byHash, sc)).toEqual(allMatches(byPath, sc));
      }),
      { numRuns: RUNS / 2 },
    );
  });
});

describe("RadixIndex on unchained and colliding hashes", () => {
  // A tiny alphabet: values recur at other depths and under other parents all the time.
  const request = fc.array(fc.nat(9), { maxLength: 10 });
  const programArb = fc.record({
    maxOrigins: fc.integer({ min: 1, max: 3 }),
    maxChunks: fc.integer({ min: 1, max: 20 }),
    ops: fc.array(fc.tuple(fc.nat(3), request, fc.nat(2), fc.nat(11)), {
      maxLength: 40,
      size: "max",
    }),
  });

  it("agrees with the model: the collision guard stops inserts, match stays exact", () => {
    fc.assert(
      fc.property(programArb, ({ maxOrigins, maxChunks, ops }) => {
        const index = new RadixIndex({ maxOrigins, maxChunks });
        const model = new ReferenceModel(maxOrigins, maxChunks);
        const sc: Scenario = { maxOrigins, maxChunks, paths: [], parentPath: [], ops: [] };
        let now = 0;
        for (const [kind, hashes, origin, n] of ops) {
          sc.paths[0] = hashes;
          const o = origin % maxOrigins;
          const op =
            kind === 0
              ? { kind: "insert" as const, path: 0, origin: o, now: now++ }
              : kind === 1
                ? { kind: "truncate" as const, path: 0, origin: o, keep: n }
                : kind === 2
                  ? { kind: "setCapacity" as const, origin: o, chunks: n }
                  : { kind: "match" as const, path: 0 };
          expect(runOp(index, sc, op), JSON.stringify(op)).toEqual(runOp(model, sc, op));
          expect(runOp(index, sc, { kind: "match", path: 0 })).toEqual(
            runOp(model, sc, { kind: "match", path: 0 }),
          );
          checkAgainstModel(index, model, sc);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("match never throws on values outside [0, 2^53) and insert rejects them with a RangeError", () => {
    const junk = fc.array(
      fc.oneof(
        fc.nat(9),
        fc.constantFrom(Number.NaN, -1, 1.5, 2 ** 60, Number.POSITIVE_INFINITY, -0),
      ),
      { maxLength: 10 },
    );
    fc.assert(
      fc.property(fc.array(junk, { maxLength: 20 }), (requests) => {
        const index = new RadixIndex({ maxOrigins: 2, maxChunks: 15 });
        const out = new Int32Array(2);
        requests.forEach((hashes, i) => {
          try {
            index.insert(hashes, i % 2, i);
          } catch (err) {
            expect(err).toBeInstanceOf(RangeError);
            expect(hashes.every((h) => Number.isSafeInteger(h) && h >= 0)).toBe(false);
          }
          const depth = index.match(hashes, out);
          expect(depth).toBeLessThanOrEqual(hashes.length);
          for (const d of out) expect(d).toBeLessThanOrEqual(depth);
          index.checkInvariants();
        });
      }),
      { numRuns: RUNS / 2 },
    );
  });
});
