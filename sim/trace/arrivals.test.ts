import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testProfile } from "../engine/test-engine.ts";
import { arrivalTimes, jitterTies, loadScale, spreadTies } from "./arrivals.ts";

describe("spreadTies", () => {
  it("spreads each run of equal stamps evenly up to the next stamp, the last over the mean gap", () => {
    expect(spreadTies([0, 0, 0, 3000, 6000, 6000])).toEqual([0, 1000, 2000, 3000, 6000, 7500]);
  });

  it("leaves distinct stamps alone", () => {
    expect(spreadTies([0, 5, 9])).toEqual([0, 5, 9]);
  });
});

describe("jitterTies", () => {
  /** Non-decreasing stamps on 3 s ticks with runs of ties, as in the conversation trace. */
  const ticks = fc
    .array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 6 })), {
      minLength: 1,
      maxLength: 20,
    })
    .map((runs) => {
      let t = 0;
      return runs.flatMap(([gap, count]) => {
        t += gap * 3000;
        return Array.from({ length: count }, () => t);
      });
    });

  it("keeps every request inside its tick, in order, the first on the stamp", () => {
    fc.assert(
      fc.property(ticks, fc.integer({ min: 0, max: 1000 }), (stamps, seed) => {
        const out = jitterTies(stamps, seed);
        const distinct = [...new Set(stamps)];
        const meanGap =
          ((distinct.at(-1) as number) - (distinct[0] as number)) /
          Math.max(1, distinct.length - 1);
        out.forEach((t, i) => {
          const stamp = stamps[i] as number;
          const next = distinct[distinct.indexOf(stamp) + 1] ?? stamp + meanGap;
          expect(t).toBeGreaterThanOrEqual(stamp);
          if (next > stamp) expect(t).toBeLessThan(next);
          if (i > 0) expect(t).toBeGreaterThanOrEqual(out[i - 1] as number);
          if (i === 0 || stamps[i - 1] !== stamp) expect(t).toBe(stamp);
        });
      }),
    );
  });

  it("is the same for one seed and differs between seeds", () => {
    const stamps = [0, 0, 0, 0, 3000, 3000, 3000, 6000];
    expect(jitterTies(stamps, 7)).toEqual(jitterTies(stamps, 7));
    expect(jitterTies(stamps, 7)).not.toEqual(jitterTies(stamps, 8));
    expect(jitterTies(stamps, 7)).not.toEqual(spreadTies(stamps));
  });

  it("leaves a trace without ties alone in every mode", () => {
    const stamps = [0, 1.5, 4, 9];
    for (const mode of ["jitter", "spread", "burst"] as const) {
      expect(arrivalTimes(stamps, mode, 3)).toEqual(stamps);
    }
  });
});

describe("loadScale", () => {
  it("makes offered prefill work equal load x fleet capacity over the span", () => {
    // 1 token per ms, no attention term: 3 prompts of 1,000 tokens are 3,000 ms of work.
    const profile = testProfile();
    const scale = loadScale([0, 500, 1000], [1000, 1000, 1000], profile, 2, 0.5);
    // The span becomes 3000 / (0.5 * 2) = 3000 ms.
    expect(scale * 1000).toBeCloseTo(3000, 9);
  });

  it("leaves a single instant alone", () => {
    expect(loadScale([5, 5], [10, 10], testProfile(), 1, 1)).toBe(1);
  });
});
