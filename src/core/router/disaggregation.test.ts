import { describe, expect, it } from "vitest";
import { asSlot } from "../origin-indexes.ts";
import { createRng } from "../rng.ts";
import type { DisaggregationSettings } from "../settings/pd-settings.ts";
import {
  type DisaggregationInput,
  decideDisaggregation,
  smallUncached,
  wholeOnPrefill,
} from "./disaggregation.ts";
import { choosePrefill, type PrefillCandidate } from "./prefill-choice.ts";

const DYNAMO: DisaggregationSettings = {
  minUncachedTokens: 2048,
  maxUncachedFraction: 0.7,
  prefillBusyMs: 1000,
  prefillServesWhole: false,
};
const calm = (slot: number, matchedTokens = 0): PrefillCandidate => ({
  slot: asSlot(slot),
  matchedTokens,
  queuedPrefillTokens: 0,
  prefillTokensPerSecond: 10_000,
});

function input(over: Partial<DisaggregationInput>): DisaggregationInput {
  return {
    rule: DYNAMO,
    promptTokens: 8192,
    n: 1,
    decodeRole: "decode",
    decodeMatchedTokens: 0,
    prefill: [calm(5)],
    attentionTokens: 32_768,
    rng: createRng(1),
    ...over,
  };
}

describe("decideDisaggregation", () => {
  // Each row: the case, what differs from a fresh 8K-token prompt on a decode origin beside one
  // idle prefill origin under Dynamo's rule, and the reason expected.
  const rows: [string, Partial<DisaggregationInput>, string][] = [
    ["a fresh long prompt goes remote", {}, "pd:remote"],
    ["n > 1 stays on the decode origin", { n: 2 }, "pd:n>1"],
    ["n > 1 wins over every other rule", { n: 3, decodeRole: "both", prefill: [] }, "pd:n>1"],
    ["a both origin takes no KV", { decodeRole: "both" }, "pd:aggregated-origin"],
    ["a prefill origin chosen serves whole", { decodeRole: "prefill" }, "pd:whole-on-prefill"],
    ["n > 1 on a prefill origin is still n > 1", { n: 2, decodeRole: "prefill" }, "pd:n>1"],
    [
      "a mostly cached prompt with a short tail stays (uncached 192 < 2048, 2% <= 70%)",
      { decodeMatchedTokens: 8000 },
      "pd:local-cached",
    ],
    [
      "a short tail still goes remote when the fraction is large (Dynamo: 1000 of 1000 > 70%)",
      { promptTokens: 1000 },
      "pd:remote",
    ],
    [
      "a short fresh prompt stays when the fraction test is off (1)",
      { promptTokens: 1000, rule: { ...DYNAMO, maxUncachedFraction: 1 } },
      "pd:local-cached",
    ],
    [
      "a large uncached part goes remote whatever the fraction (3000 of 100K cached)",
      { promptTokens: 100_000, decodeMatchedTokens: 97_000 },
      "pd:remote",
    ],
    [
      "minUncachedTokens 0 always disaggregates",
      { decodeMatchedTokens: 8192, rule: { ...DYNAMO, minUncachedTokens: 0 } },
      "pd:remote",
    ],
    ["no eligible prefill origin", { prefill: [] }, "pd:no-prefill-origin"],
    [
      "the best prefill origin has 1.2 s queued (> 1000 ms)",
      { prefill: [{ ...calm(5), queuedPrefillTokens: 12_000 }] },
      "pd:prefill-busy",
    ],
    [
      "one busy prefill origin beside a calm one is not busy",
      { prefill: [{ ...calm(5), queuedPrefillTokens: 50_000 }, calm(6)] },
      "pd:remote",
    ],
    [
      "a queue of exactly prefillBusyMs is not busy",
      { prefill: [{ ...calm(5), queuedPrefillTokens: 10_000 }] },
      "pd:remote",
    ],
  ];

  it.each(rows)("%s", (_name, over, reason) => {
    const d = decideDisaggregation(input(over));
    expect(d.reason).toBe(reason);
    expect(d.prefill === null).toBe(reason !== "pd:remote");
  });

  it("smallUncached follows Dynamo's bounds: < tokens, <= fraction", () => {
    expect(smallUncached(DYNAMO, 1000, 300)).toBe(true); // 700 uncached, exactly 70%
    expect(smallUncached(DYNAMO, 1000, 299)).toBe(false); // 70.1%
    expect(smallUncached(DYNAMO, 10_000, 7952)).toBe(false); // 2048 uncached
    expect(smallUncached(DYNAMO, 10_000, 7953)).toBe(true);
    expect(smallUncached(DYNAMO, 0, 0)).toBe(true);
  });
});

describe("wholeOnPrefill", () => {
  // Dynamo's rule: a prefill origin takes a request whole only while it has no prefill queued
  // and the rule would keep the request local there.
  it("takes a short request on an idle origin", () => {
    expect(wholeOnPrefill(DYNAMO, 1000, 400, 0)).toBe(true);
  });

  it("leaves it to the decode origins while any prefill is queued there", () => {
    expect(wholeOnPrefill(DYNAMO, 1000, 400, 1)).toBe(false);
  });

  it("never takes a long prompt it does not hold, however calm", () => {
    expect(wholeOnPrefill(DYNAMO, 8192, 0, 0)).toBe(false);
    // ... but one it holds all but a short tail of, as a decode origin would keep it.
    expect(wholeOnPrefill(DYNAMO, 8192, 8000, 0)).toBe(true);
  });
});

describe("choosePrefill", () => {
  const rng = createRng(3);

  it("takes the origin that finishes the prefill first: queue plus uncached work", () => {
    // 8K prompt: the holder of 6K with 3K queued (5K to do) beats an idle origin holding nothing.
    const holder = { ...calm(1, 6000), queuedPrefillTokens: 3000 };
    const idle = calm(2);
    expect(choosePrefill([idle, holder], 8192, 32_768, rng)?.candidate.slot).toBe(1);
    // ... until its queue outweighs the tokens it saves.
    const busyHolder = { ...holder, queuedPrefillTokens: 9000 };
    expect(choosePrefill([idle, busyHolder], 8192, 32_768, rng)?.candidate.slot).toBe(2);
  });

  it("weighs speed: a faster origin's queue is shorter in time", () => {
    const slow = { ...calm(1), queuedPrefillTokens: 5000 };
    const fast = { ...calm(2), queuedPrefillTokens: 8000, prefillTokensPerSecond: 40_000 };
    const choice = choosePrefill([slow, fast], 4096, 32_768, rng);
    expect(choice?.candidate.slot).toBe(2);
    expect(choice?.queueMs).toBe(200);
  });

  it("breaks a tie in time by the longer match, then at random", () => {
    // Attention off (A = infinity): 4096 tokens at 10K/s and 6144 at 15K/s both take 0.4096 s.
    const holder = calm(1, 2048);
    const other = { ...calm(2), prefillTokensPerSecond: 15_000 };
    for (let seed = 0; seed < 10; seed++) {
      const choice = choosePrefill([other, holder], 6144, Infinity, createRng(seed));
      expect(choice?.candidate.slot).toBe(1);
    }
    const picks = new Set<number>();
    for (let seed = 0; seed < 20; seed++) {
      const choice = choosePrefill([calm(1), calm(2)], 4096, 32_768, createRng(seed));
      picks.add(choice?.candidate.slot as number);
    }
    expect(picks).toEqual(new Set([1, 2]));
  });

  it("has nothing to choose from an empty list", () => {
    expect(choosePrefill([], 4096, 32_768, rng)).toBeNull();
  });
});
