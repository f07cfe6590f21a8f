import { describe, expect, it } from "vitest";
import { createPolicy, policyOf } from "./index.ts";
import { context } from "./test-context.ts";

// Origin 0 holds 4,000 of a 4,096-token prompt; origin 1 holds nothing and is idle.
// Both prefill at 10,000 tokens/s; affinityPrice 0.5, no decode slowdown for exact arithmetic.
// Staying costs (q + 96)/S; moving costs (4096 + 0.5 * 4000)/S = 6096/S: break-even at q = 6000.
const policy = () => createPolicy(policyOf("cost", { decodeSlowdown: 0 }));
const at = (queued: number) =>
  policy().decide(
    context([{ matched: 4000, queuedPrefillTokens: queued }, { matched: 0 }], {
      promptTokens: 4096,
    }),
  );

describe("cost", () => {
  it.each([
    [0, 0, "cache-hit"],
    [3000, 0, "cache-hit"],
    [5999, 0, "cache-hit"],
    [6001, 1, "replicate"],
    [20000, 1, "replicate"],
  ])("with %i tokens queued at the holder it picks %i (%s)", (queued, origin, reason) => {
    expect(at(queued)).toMatchObject({ origin, reason });
  });

  it("without a price it is greedy: the break-even drops to the recompute cost", () => {
    const greedy = createPolicy(policyOf("cost", { decodeSlowdown: 0, affinityPrice: 0 }));
    const d = greedy.decide(
      context([{ matched: 4000, queuedPrefillTokens: 4100 }, {}], { promptTokens: 4096 }),
    );
    expect(d.origin).toBe(1);
  });

  it("prefers the faster origin for an uncached prompt", () => {
    const d = policy().decide(
      context([{ prefillTokensPerSecond: 5000 }, { prefillTokensPerSecond: 20_000 }]),
    );
    expect(d).toMatchObject({ origin: 1, reason: "least-ttft" });
  });

  it("counts decode interference: many requests in flight slow prefill", () => {
    const slowed = createPolicy(policyOf("cost", { decodeSlowdown: 0.05 }));
    const d = slowed.decide(
      context([{ outstanding: 60, matched: 2048 }, { outstanding: 0 }], { promptTokens: 4096 }),
    );
    // Holder: 2048 * (1 + 3) = 8192 token-times; other: 4096 + 0.5 * 2048 = 5120.
    expect(d.origin).toBe(1);
  });

  it("breaks exact ties by the longer match, then fewer in flight", () => {
    const p = createPolicy(policyOf("cost", { decodeSlowdown: 0, affinityPrice: 0 }));
    // Equal scores: origin 1 holds 1000 more but has 1000 more queued.
    const d = p.decide(
      context([{ queuedPrefillTokens: 0 }, { matched: 1000, queuedPrefillTokens: 1000 }]),
    );
    expect(d.origin).toBe(1);
    const e = p.decide(context([{ outstanding: 4 }, { outstanding: 2 }]));
    expect(e.origin).toBe(1);
  });
});
