/**
 * Test-only: random programs of radix index operations (fast-check arbitraries) and a driver
 * that runs one operation on anything shaped like the index, real or reference model.
 *
 * Paths come from a small random tree of unique chained values (mostly long chains, some
 * branching), so programs produce shared prefixes, divergence inside nodes, requests ending
 * inside nodes, partial ownership and frequent evictions (small capacities and budgets).
 */

import fc from "fast-check";
import type { Eviction } from "../radix-index/evict.ts";

export type Op =
  | { kind: "insert"; path: number; origin: number; now: number }
  | { kind: "match"; path: number }
  | { kind: "truncate"; path: number; origin: number; keep: number }
  | { kind: "removeOrigin"; origin: number }
  | { kind: "setCapacity"; origin: number; chunks: number };

export interface Scenario {
  maxOrigins: number;
  maxChunks: number;
  /** Root-to-node value sequences, one per tree node. */
  paths: number[][];
  /** Index of each path's parent path (-1 for depth 1). */
  parentPath: number[];
  ops: Op[];
}

/** The operations both `RadixIndex` and `ReferenceModel` offer. */
export interface IndexLike {
  match(hashes: number[], out: Int32Array): number;
  insert(hashes: number[], origin: number, now: number): readonly Eviction[];
  truncate(hashes: number[], origin: number, keep: number): number;
  removeOrigin(origin: number): number;
  setCapacity(origin: number, chunks: number): readonly Eviction[];
  owned(origin: number): number;
}

const MAX_NODES = 30;

const rawOp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("insert" as const),
      path: fc.nat(),
      origin: fc.nat(),
      dt: fc.integer({ min: -1, max: 3 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("match" as const), path: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("truncate" as const),
      path: fc.nat(),
      origin: fc.nat(),
      keep: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("removeOrigin" as const), origin: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("setCapacity" as const),
      origin: fc.nat(),
      chunks: fc.oneof(fc.nat(10), fc.constant(Number.POSITIVE_INFINITY)),
    }),
  },
);

export function scenarioArb(maxOps = 50): fc.Arbitrary<Scenario> {
  return fc
    .record({
      maxOrigins: fc.integer({ min: 1, max: 4 }),
      maxChunks: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(Number.POSITIVE_INFINITY)),
      tree: fc.array(fc.tuple(fc.nat(9), fc.nat()), {
        minLength: 1,
        maxLength: MAX_NODES,
        size: "max",
      }),
      values: fc.uniqueArray(fc.oneof(fc.nat(300), fc.maxSafeNat()), {
        minLength: MAX_NODES,
        maxLength: MAX_NODES,
      }),
      ops: fc.array(rawOp, { minLength: 1, maxLength: maxOps, size: "max" }),
    })
    .map(({ maxOrigins, maxChunks, tree, values, ops }) => {
      const paths: number[][] = [];
      const parentPath: number[] = [];
      tree.forEach(([mode, r], i) => {
        // Mostly extend the previous node (long runs), sometimes branch anywhere.
        const parent = mode < 6 ? i - 1 : (r % (i + 1)) - 1;
        parentPath.push(parent);
        paths.push([...(parent < 0 ? [] : paths[parent]!), values[i]!]);
      });
      let now = 0;
      const resolved: Op[] = [];
      for (const op of ops) {
        const origin = "origin" in op ? op.origin % maxOrigins : 0;
        const path = "path" in op ? op.path % paths.length : 0;
        switch (op.kind) {
          case "insert":
            now += op.dt;
            resolved.push({ kind: "insert", path, origin, now });
            break;
          case "match":
            resolved.push({ kind: "match", path });
            break;
          case "truncate":
            resolved.push({
              kind: "truncate",
              path,
              origin,
              keep: op.keep % (paths[path]!.length + 2),
            });
            break;
          case "removeOrigin":
            resolved.push({ kind: "removeOrigin", origin });
            break;
          case "setCapacity":
            resolved.push({ kind: "setCapacity", origin, chunks: op.chunks });
            break;
        }
      }
      return { maxOrigins, maxChunks, paths, parentPath, ops: resolved };
    });
}

/** Runs `op` on `target` and returns its observable result as plain data. */
export function runOp(target: IndexLike, sc: Scenario, op: Op): unknown {
  switch (op.kind) {
    case "insert":
      return target.insert(sc.paths[op.path]!, op.origin, op.now);
    case "match": {
      // Two slots past maxOrigins, pre-filled, to check that match zeroes them.
      const out = new Int32Array(sc.maxOrigins + 2).fill(7);
      const depth = target.match(sc.paths[op.path]!, out);
      return { depth, out: [...out] };
    }
    case "truncate":
      return target.truncate(sc.paths[op.path]!, op.origin, op.keep);
    case "removeOrigin":
      return target.removeOrigin(op.origin);
    case "setCapacity":
      return target.setCapacity(op.origin, op.chunks);
  }
}

/** Each origin's matched depth on every tree path. */
export function allMatches(target: IndexLike, sc: Scenario): number[][] {
  const out = new Int32Array(sc.maxOrigins);
  return sc.paths.map((p) => {
    target.match(p, out);
    return [...out];
  });
}
