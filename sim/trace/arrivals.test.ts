import { describe, expect, it } from "vitest";
import { testProfile } from "../engine/test-engine.ts";
import { loadScale, spreadTies } from "./arrivals.ts";

describe("spreadTies", () => {
  it("spreads each run of equal stamps evenly up to the next stamp, the last over the mean gap", () => {
    expect(spreadTies([0, 0, 0, 3000, 6000, 6000])).toEqual([0, 1000, 2000, 3000, 6000, 7500]);
  });

  it("leaves distinct stamps alone", () => {
    expect(spreadTies([0, 5, 9])).toEqual([0, 5, 9]);
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
