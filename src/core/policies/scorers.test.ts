import { describe, expect, it } from "vitest";
import { context } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";

describe("llm-d weighted scorers", () => {
  it("adds 2 x prefix + 1 x queue + 1 x (1 - KV usage) and takes the max", () => {
    const policy = createPolicy(policyOf("llm-d"));
    const engine = (waiting: number, kvUsage: number) => ({
      running: 0,
      waiting,
      kvUsage,
      freshness: 1,
    });
    // 64 chunks; o0: full match, longest queue, KV 0.9 -> 2*1 + 0 + 0.1 = 2.1
    // o1: no match, empty queue, KV 0.1 -> 0 + 1 + 0.9 = 1.9; o2: half match, queue 5/10 -> 1 + 0.5 + 0.5 = 2.0
    const d = policy.decide(
      context([
        { matched: 4096, engine: engine(10, 0.9) },
        { engine: engine(0, 0.1) },
        { matched: 2048, engine: engine(5, 0.5) },
      ]),
    );
    expect(d).toMatchObject({ origin: 0, reason: "max-score" });
    expect(d.ranking).toEqual([0, 2, 1]);
  });

  it("lets load outweigh a partial match when weights say so", () => {
    const policy = createPolicy(policyOf("llm-d", { prefixWeight: 1, queueWeight: 2 }));
    const engine = (waiting: number) => ({ running: 0, waiting, kvUsage: 0.5, freshness: 1 });
    const d = policy.decide(context([{ matched: 2048, engine: engine(8) }, { engine: engine(0) }]));
    expect(d.origin).toBe(1);
  });
});

describe("llm-d precise prefix scorer", () => {
  const idle = { running: 0, waiting: 0, kvUsage: 0.5, freshness: 1 };

  it("scores the longest cached prefix over the prompt's blocks, 0 without a hit", () => {
    const policy = createPolicy(policyOf("llm-d-precise", { queueWeight: 0, kvWeight: 0 }));
    // 64 blocks; hits 2048 / 4096 / none / 1024 tokens: prefix scores 0.5, 1, 0, 0.25.
    const d = policy.decide(
      context([
        { matched: 2048, engine: idle },
        { matched: 4096, engine: idle },
        { engine: idle },
        { matched: 1024, engine: idle },
      ]),
    );
    expect(d).toMatchObject({ origin: 1, reason: "max-score" });
    expect(d.ranking).toEqual([1, 0, 3, 2]);
  });

  it("drops the prompt's trailing partial block from the denominator", () => {
    // 4,100 tokens are 64 whole blocks (the last 4 tokens are no block): a 4096-token hit is
    // a full 1, worth as much as the idle origin's empty queue and free KV.
    const busy = { ...idle, waiting: 8, kvUsage: 1 };
    const pool = [{ matched: 4096, engine: busy }, { engine: { ...idle, kvUsage: 0 } }];
    // o0: 2 x 1 + 0 + 0 = 2; o1: 0 + 1 + 1 = 2: a tie, broken at random, so both win some
    // seeds (counting the partial block, 2 x 64/65 < 2 would always lose).
    const winners = new Set(
      [1, 2, 3, 4, 5, 6, 7, 8].map(
        (seed) =>
          createPolicy(policyOf("llm-d-precise")).decide(
            context(pool, { promptTokens: 4100 }, seed),
          ).origin,
      ),
    );
    expect(winners).toEqual(new Set([0, 1]));
  });

  it("a prefix every request shares does not pin the pool to the busy origins that hold it", () => {
    // The bug: min-max over the origins with a hit gave a lone 1-block hit (every request's
    // shared system prompt) the full prefix score 1, so its holder, queue longest and KV half
    // full, still beat every idle origin (2 x 1 + 0 + 0.5 > 0 + 1 + 1) and the whole
    // conversation trace piled onto the 2-4 origins that first cached block 0 (llm-d PR #1107:
    // "small absolute hits were amplified to 1.0 when best-in-set"). As a share of the prompt,
    // 1 of 64 blocks is worth 2/64, and load decides.
    const busy = { ...idle, waiting: 8 };
    const pool = [{ matched: 64, engine: busy }, { engine: { ...idle, kvUsage: 0 } }];
    expect(createPolicy(policyOf("llm-d-precise")).decide(context(pool)).origin).toBe(1);
  });

  it("scores a prompt's hits exactly as the approximate scorer does, on the engines' cache", () => {
    // Upstream's two prefix scorers now share matched / total; they differ in the index read.
    const pool = [
      { matched: 1024, engine: { ...idle, waiting: 8 } },
      { matched: 3072, engine: { ...idle, waiting: 2, kvUsage: 0.9 } },
      { engine: { ...idle, kvUsage: 0.2 } },
    ];
    const precise = createPolicy(policyOf("llm-d-precise")).decide(context(pool));
    const approximate = createPolicy(policyOf("llm-d")).decide(context(pool));
    expect(precise.ranking).toEqual(approximate.ranking);
  });
});

describe("dynamo KV router cost", () => {
  it("reproduces the documented worked example (W2 with cost 10 wins)", () => {
    // Block = 64 tokens. Prompt of 16 blocks; overlaps give prefill 8 / 5 / 2 blocks; decode
    // blocks 10 / 5 / 9 in flight, each worker adding the same 2 of the prompt's blocks.
    const policy = createPolicy(policyOf("dynamo"));
    const d = policy.decide(
      context(
        [
          { matched: 8 * 64, activeChunks: 10, added: 2 },
          { matched: 11 * 64, activeChunks: 5, added: 2 },
          { matched: 14 * 64, activeChunks: 9, added: 2 },
        ],
        { promptTokens: 16 * 64 },
      ),
    );
    expect(d).toMatchObject({ origin: 1, reason: "min-cost" });
    expect(d.ranking).toEqual([1, 2, 0]);
  });

  it("counts the worker's in-flight prefill tokens by default", () => {
    const pool = [{ matched: 4096, prefillingTokens: 100_000 }, {}];
    expect(createPolicy(policyOf("dynamo")).decide(context(pool)).origin).toBe(1);
    const without = createPolicy(policyOf("dynamo", { trackActivePrefill: false }));
    expect(without.decide(context(pool)).origin).toBe(0);
  });

  it("counts blocks shared with the worker's in-flight requests once", () => {
    // Equal prefill; o0 holds 40 active blocks of which this 64-block prompt shares 60 (adds 4),
    // o1 holds 10 unrelated ones (adds all 64): 44 < 74.
    const d = createPolicy(policyOf("dynamo")).decide(
      context([
        { activeChunks: 40, added: 4 },
        { activeChunks: 10, added: 64 },
      ]),
    );
    expect(d.origin).toBe(0);
  });

  it("samples by softmax over range-scaled costs above temperature 0", () => {
    // Costs 10 / 7 / 9 blocks (prefill 8, 5, 7 + 2 decode): at temperature 0 o1 always wins;
    // at 1, p ~ exp(-(c - 7) / 3): o1 0.47, o2 0.24, o0 0.17 -> every origin wins some seeds,
    // o1 most often.
    const pool = [{ matched: 8 * 64 }, { matched: 11 * 64 }, { matched: 9 * 64 }];
    const wins = [0, 0, 0];
    for (let seed = 1; seed <= 300; seed++) {
      const d = createPolicy(policyOf("dynamo", { temperature: 1 })).decide(
        context(pool, { promptTokens: 16 * 64 }, seed),
      );
      wins[d.origin] = (wins[d.origin] as number) + 1;
    }
    expect(Math.min(...wins)).toBeGreaterThan(20);
    expect(wins[1]).toBe(Math.max(...wins));
    const cold = createPolicy(policyOf("dynamo"));
    expect(cold.decide(context(pool, { promptTokens: 16 * 64 }, 7)).origin).toBe(1);
  });

  it("breaks ties by the smaller tree", () => {
    const policy = createPolicy(policyOf("dynamo"));
    for (let seed = 1; seed <= 20; seed++) {
      const pool = [{ indexedTokens: 9000 }, { indexedTokens: 500 }, { indexedTokens: 7000 }];
      expect(policy.decide(context(pool, {}, seed))).toMatchObject({
        origin: 1,
        ranking: [1, 2, 0],
      });
    }
  });
});
