import { describe, expect, it } from "vitest";
import { prefillWork } from "../prefill-work.ts";
import { context } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";

// Origin 0 holds 4,000 of a 4,096-token prompt; origin 1 holds nothing. Both prefill at
// 10,000 tokens/s. With the load term off, staying costs Q + W(4000) and moving costs
// W(0) + a * (W(0) - W(4000)), so the holder keeps the request while its queue
// Q < (1 + a) * (W(0) - W(4000)).
const W = (cached: number) => prefillWork(cached, 4096, 32_768);
const recompute = W(0) - W(4000);

function decide(queued: number, params: Record<string, unknown>, hotTokens = 0) {
  const policy = createPolicy(policyOf("cost", { loadAffinity: 0, ...params }));
  return policy.decide(
    context([{ matched: 4000, queuedPrefillTokens: queued }, { matched: 0 }], {
      promptTokens: 4096,
      hotTokens,
    }),
  );
}

describe("cost", () => {
  it.each([
    [0, 0, "cache-hit"],
    [2 * recompute, 0, "cache-hit"],
    [4 * recompute - 1, 0, "cache-hit"],
    [4 * recompute + 1, 1, "replicate"],
    [20 * recompute, 1, "replicate"],
  ])("with %d work queued at the holder (price 3) it picks %i (%s)", (queued, origin, reason) => {
    expect(decide(queued, { affinityPrice: 3 })).toMatchObject({ origin, reason });
  });

  it("without a price it is greedy: it moves once the queue outweighs one recompute", () => {
    expect(decide(recompute - 1, { affinityPrice: 0 }).origin).toBe(0);
    expect(decide(recompute + 1, { affinityPrice: 0 }).origin).toBe(1);
  });

  it("a hot shared prefix is not priced: it replicates as soon as the queue outweighs a recompute", () => {
    expect(decide(2 * recompute, { affinityPrice: 3 }, 4000).origin).toBe(1);
    expect(decide(recompute - 1, { affinityPrice: 3 }, 4000).origin).toBe(0);
    // Only the private part beyond the hot prefix is priced.
    const partlyHot = W(2000) - W(4000);
    expect(decide(recompute + 3 * partlyHot - 1, { affinityPrice: 3 }, 2000).origin).toBe(0);
    expect(decide(recompute + 3 * partlyHot + 1, { affinityPrice: 3 }, 2000).origin).toBe(1);
  });

  it("values locality more when the fleet is backed up (load term)", () => {
    const queued = 5 * recompute;
    expect(decide(queued, { affinityPrice: 3, loadAffinity: 0 }).origin).toBe(1);
    // Mean backlog (queued / 2 origins) is ~0.27 prompts here; the load term adds enough to stay.
    expect(decide(queued, { affinityPrice: 3, loadAffinity: 10 }).origin).toBe(0);
  });

  it("weighs long prompts by attention: a queue of one long prompt is longer than its tokens", () => {
    expect(prefillWork(0, 65_536, 32_768)).toBe(2 * 65_536);
    expect(prefillWork(60_000, 65_536, 32_768)).toBeCloseTo(5536 * (1 + 125_536 / 65_536));
  });

  it("prefers the faster origin for an uncached prompt", () => {
    const d = createPolicy(policyOf("cost")).decide(
      context([{ prefillTokensPerSecond: 5000 }, { prefillTokensPerSecond: 20_000 }]),
    );
    expect(d).toMatchObject({ origin: 1, reason: "least-ttft" });
  });

  it("breaks exact ties by the longer match, then fewer in flight", () => {
    const p = createPolicy(policyOf("cost", { affinityPrice: 0, loadAffinity: 0 }));
    // Equal scores: origin 1 holds 1,000 tokens more but has exactly their work more queued.
    const extra = prefillWork(0, 4096, 32_768) - prefillWork(1000, 4096, 32_768);
    const d = p.decide(
      context([{ queuedPrefillTokens: 0 }, { matched: 1000, queuedPrefillTokens: extra }]),
    );
    expect(d.origin).toBe(1);
    const e = p.decide(context([{ outstanding: 4 }, { outstanding: 2 }]));
    expect(e.origin).toBe(1);
  });

  it("spreads decode origins fed remote prefills (P/D piled every decode on the prefix holder)", () => {
    // Decode origins of a P/D pool whose prefills run elsewhere have no prefill queue; the one
    // holding the shared prefix won every request while its in-flight KV grew without bound.
    const policy = createPolicy(policyOf("cost"));
    const piled = policy.decide(
      context(
        [
          { matched: 1024, activeTokens: 400_000 },
          { matched: 0, activeTokens: 0 },
        ],
        {
          hotTokens: 1024,
        },
      ),
    );
    expect(piled.origin).toBe(1);
    // With equal in-flight KV the holder still wins: the term moves nothing on its own.
    const even = policy.decide(
      context(
        [
          { matched: 1024, activeTokens: 50_000 },
          { matched: 0, activeTokens: 50_000 },
        ],
        {
          hotTokens: 1024,
        },
      ),
    );
    expect(even.origin).toBe(0);
  });

  it("keeps a session on the origin holding its history however much KV is in flight there (moves paid a recompute to shift decode load)", () => {
    // Agentic sessions (~32K-token histories): the decode term moved 8% of turns off the origin
    // holding their history; each move recomputed it there, duplicated it in a second KV and
    // stalled that origin's decodes behind the prefill, while the decode load only moved along.
    const policy = createPolicy(policyOf("cost"));
    const decide = (hotTokens: number) =>
      policy.decide(
        context(
          [
            { matched: 4000, activeTokens: 1_000_000 },
            { matched: 0, activeTokens: 0 },
          ],
          { hotTokens },
        ),
      ).origin;
    expect(decide(0)).toBe(0);
    // A request that only shares a hot prefix is placed by decode load, as before.
    expect(decide(4000)).toBe(1);
  });

  it("charges in-flight KV at decodeWeight prefill tokens per token", () => {
    // Origin 0 holds 4,000 tokens of a hot prefix (saves W(0) - W(4000) of prefill) but has
    // more KV in flight.
    const decide = (extraActive: number) =>
      createPolicy(
        policyOf("cost", { affinityPrice: 0, loadAffinity: 0, decodeWeight: 0.05 }),
      ).decide(
        context([{ matched: 4000, activeTokens: extraActive }, { matched: 0 }], {
          hotTokens: 4000,
        }),
      ).origin;
    expect(decide((recompute - 1) / 0.05)).toBe(0);
    expect(decide((recompute + 1) / 0.05)).toBe(1);
  });
});
