import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quantile, weightedQuantile } from "./stats.ts";

describe("quantile (nearest rank)", () => {
  it("takes the sample of rank ceil(q * n), not the one after it", () => {
    expect(quantile([10, 20], 0.5)).toBe(10);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(hundred, 0.5)).toBe(50);
    expect(quantile(hundred, 0.99)).toBe(99);
    expect(quantile(hundred, 0.995)).toBe(100);
  });

  it("gives the minimum at q = 0, the maximum at q = 1, and 0 without samples", () => {
    expect(quantile([3, 4, 9], 0)).toBe(3);
    expect(quantile([3, 4, 9], 1)).toBe(9);
    expect(quantile([], 0.5)).toBe(0);
    expect(quantile(new Float64Array(0), 0.99)).toBe(0);
  });

  it("is the smallest sample with at least a q share of samples at or below it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 200 }),
        // Exact ranks (q * n an integer) are where nearest-rank conventions part.
        fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 0.25, 0.5, 1)),
        (values, q) => {
          const sorted = Float64Array.from(values).sort();
          const v = quantile(sorted, q);
          const need = Math.max(1, Math.ceil(q * sorted.length));
          expect(sorted.filter((x) => x <= v).length).toBeGreaterThanOrEqual(need);
          expect(sorted.filter((x) => x < v).length).toBeLessThan(need);
        },
      ),
    );
  });
});

describe("weightedQuantile", () => {
  it("is quantile over the samples the weights stand for", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: 1, max: 5 })), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 0.5, 0.99, 1)),
        (pairs, q) => {
          pairs.sort(([a], [b]) => a - b);
          const expanded = pairs.flatMap(([v, w]) => Array<number>(w).fill(v));
          const values = pairs.map(([v]) => v);
          const weights = pairs.map(([, w]) => w);
          expect(weightedQuantile(values, weights, q)).toBe(quantile(expanded, q));
        },
      ),
    );
    expect(weightedQuantile([], [], 0.5)).toBe(0);
  });
});
