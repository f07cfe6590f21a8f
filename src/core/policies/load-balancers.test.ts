import { describe, expect, it } from "vitest";
import { context } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";

describe("round-robin", () => {
  it("cycles through eligible origins in order, skipping ineligible ones", () => {
    const policy = createPolicy(policyOf("round-robin"));
    const ctx = context([{}, { eligible: false }, {}, {}]);
    expect(Array.from({ length: 6 }, () => policy.decide(ctx).origin)).toEqual([0, 2, 3, 0, 2, 3]);
  });
});

describe("random", () => {
  it("spreads roughly evenly over eligible origins", () => {
    const policy = createPolicy(policyOf("random"));
    const ctx = context([{}, {}, { eligible: false }, {}]);
    const counts = [0, 0, 0, 0];
    for (let k = 0; k < 3000; k++) {
      const i = policy.decide(ctx).origin;
      counts[i] = (counts[i] ?? 0) + 1;
    }
    expect(counts[2]).toBe(0);
    for (const i of [0, 1, 3]) expect(counts[i]).toBeGreaterThan(850);
  });
});

describe("least-outstanding", () => {
  it("picks the fewest in flight per weight, and ranks the rest", () => {
    const policy = createPolicy(policyOf("least-outstanding"));
    const d = policy.decide(
      context([{ outstanding: 5 }, { outstanding: 2 }, { outstanding: 4, weight: 4 }]),
    );
    expect(d.origin).toBe(2);
    expect(d.ranking).toEqual([2, 1, 0]);
  });

  it("breaks ties at random, not always the first origin", () => {
    const policy = createPolicy(policyOf("least-outstanding"));
    const ctx = context([{}, {}, {}]);
    const seen = new Set(Array.from({ length: 50 }, () => policy.decide(ctx).origin));
    expect(seen.size).toBe(3);
  });
});

describe("power-of-two", () => {
  it("never picks the most loaded of three when the other two are idle", () => {
    const policy = createPolicy(policyOf("power-of-two"));
    const ctx = context([{ outstanding: 0 }, { outstanding: 90 }, { outstanding: 0 }]);
    for (let k = 0; k < 200; k++) expect(policy.decide(ctx).origin).not.toBe(1);
  });

  it("compares engine loads when both sampled origins have reports", () => {
    const policy = createPolicy(policyOf("power-of-two"));
    const busy = { running: 50, waiting: 10, kvUsage: 0.9, freshness: 1 };
    const idle = { running: 1, waiting: 0, kvUsage: 0.1, freshness: 1 };
    // Router counts say the opposite of the engines; the engines win.
    const d = policy.decide(
      context([
        { outstanding: 0, engine: busy },
        { outstanding: 9, engine: idle },
      ]),
    );
    expect(d).toMatchObject({ origin: 1, reason: "two-choices-engine" });
  });
});
