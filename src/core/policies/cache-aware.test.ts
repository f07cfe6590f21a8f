import { describe, expect, it } from "vitest";
import { context, type OriginSpec } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";

// SGLang's branch for each case (defaults: cache 0.5, abs 32, rel 1.1), prompt of 4,096 tokens.
const cases: [string, OriginSpec[], number, string][] = [
  [
    "imbalanced: abs and rel both exceeded -> least loaded",
    [{ outstanding: 40, matched: 4096 }, { outstanding: 5 }],
    1,
    "imbalanced",
  ],
  [
    "abs exceeded but not rel -> not imbalanced, cache wins",
    [{ outstanding: 340, matched: 4096 }, { outstanding: 320 }],
    0,
    "cache-hit",
  ],
  [
    "rel exceeded but not abs -> not imbalanced, cache wins",
    [{ outstanding: 30, matched: 4096 }, { outstanding: 1 }],
    0,
    "cache-hit",
  ],
  [
    "match rate above threshold -> longest match",
    [
      { outstanding: 3, matched: 1024 },
      { outstanding: 4, matched: 3072 },
    ],
    1,
    "cache-hit",
  ],
  [
    "match rate at threshold -> least loaded",
    [{ outstanding: 3, matched: 2048 }, { outstanding: 2 }],
    1,
    "cache-miss",
  ],
  [
    "no match -> least loaded",
    [{ outstanding: 2 }, { outstanding: 1 }, { outstanding: 3 }],
    1,
    "cache-miss",
  ],
  [
    "longest match ties -> the less loaded holder",
    [
      { outstanding: 9, matched: 4096 },
      { outstanding: 2, matched: 4096 },
    ],
    1,
    "cache-hit",
  ],
  [
    "ineligible holder is ignored",
    [{ eligible: false, matched: 4096 }, { outstanding: 7 }],
    1,
    "cache-miss",
  ],
];

describe("cache-aware (SGLang)", () => {
  it.each(cases)("%s", (_name, specs, origin, reason) => {
    const policy = createPolicy(policyOf("cache-aware"));
    expect(policy.decide(context(specs, { promptTokens: 4096 }))).toMatchObject({ origin, reason });
  });

  it("takes SGLang's CLI thresholds when configured", () => {
    const policy = createPolicy(
      policyOf("cache-aware", {
        cacheThreshold: 0.3,
        balanceAbsThreshold: 64,
        balanceRelThreshold: 1.5,
      }),
    );
    const d = policy.decide(
      context([{ outstanding: 40, matched: 1500 }, { outstanding: 5 }], { promptTokens: 4096 }),
    );
    expect(d).toMatchObject({ origin: 0, reason: "cache-hit" });
  });
});
