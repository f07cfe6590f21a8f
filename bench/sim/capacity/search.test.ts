import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type SearchOptions, searchCapacity } from "./search.ts";

const OPTIONS: SearchOptions = {
  start: 10,
  step: 1.5,
  resolution: 0.02,
  min: 0.1,
  max: 1000,
  maxProbes: 30,
};

/** A fleet whose probes pass exactly up to `threshold`. */
const upTo = (threshold: number) => async (rate: number) => rate <= threshold;

describe("searchCapacity", () => {
  it("brackets a threshold to the resolution, from above or below the start", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.2, max: 500, noNaN: true }),
        fc.double({ min: 0.2, max: 500, noNaN: true }),
        async (threshold, start) => {
          const s = await searchCapacity(upTo(threshold), { ...OPTIONS, start });
          expect(s.status).toBe("bracketed");
          expect(s.capacity).toBeLessThanOrEqual(threshold);
          expect(s.failedAt).toBeGreaterThan(threshold);
          expect((s.failedAt as number) / s.capacity).toBeLessThanOrEqual(1.02 + 1e-12);
          // Every probe that passed is at or below the capacity, every failure at or above hi.
          for (const r of s.rates) {
            if (r <= threshold) expect(r).toBeLessThanOrEqual(s.capacity);
            else expect(r).toBeGreaterThanOrEqual(s.failedAt as number);
          }
          // Bracketing over a ratio of at most 2,500 in steps of 1.5, then bisecting to 2%.
          expect(s.rates.length).toBeLessThanOrEqual(20 + 6);
        },
      ),
    );
  });

  it("takes a few probes when it starts next to the answer (a later seed)", async () => {
    const s = await searchCapacity(upTo(10.3), { ...OPTIONS, start: 10, step: 1.06 });
    expect(s.rates.length).toBeLessThanOrEqual(4);
    expect(s.capacity).toBeGreaterThan(10);
  });

  it("says when the range holds no boundary", async () => {
    const none = await searchCapacity(upTo(0), OPTIONS);
    expect(none).toMatchObject({ capacity: 0, status: "below-min", failedAt: 0.1 });
    const all = await searchCapacity(upTo(Number.POSITIVE_INFINITY), OPTIONS);
    expect(all).toMatchObject({ capacity: 1000, status: "above-max", failedAt: null });
  });

  it("stops at the probe limit with the bracket it has", async () => {
    const s = await searchCapacity(upTo(123), { ...OPTIONS, maxProbes: 5 });
    expect(s.rates).toHaveLength(5);
    expect(s.status).toBe("probe-limit");
    expect(s.capacity).toBeLessThanOrEqual(123);
  });

  it("refuses options that cannot converge", async () => {
    await expect(searchCapacity(upTo(1), { ...OPTIONS, step: 1 })).rejects.toThrow(/bad options/);
  });
});
