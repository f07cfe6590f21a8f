import { describe, expect, it } from "vitest";
import { context, type OriginSpec } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";

// SGLang's branch for each case (defaults, the gateway CLI's: cache 0.3, abs 64, rel 1.5), prompt
// of 4,096 tokens.
const cases: [string, OriginSpec[], number, string][] = [
  [
    "imbalanced: abs and rel both exceeded -> least loaded",
    [{ outstanding: 80, matched: 4096 }, { outstanding: 5 }],
    1,
    "imbalanced",
  ],
  [
    "abs exceeded but not rel -> not imbalanced, cache wins",
    [{ outstanding: 300, matched: 4096 }, { outstanding: 230 }],
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
    "match rate below threshold -> least loaded",
    [{ outstanding: 3, matched: 1024 }, { outstanding: 2 }],
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

  it("takes SGLang's library thresholds (0.5 / 32 / 1.1) when configured", () => {
    const library = { cacheThreshold: 0.5, balanceAbsThreshold: 32, balanceRelThreshold: 1.1 };
    const specs = [{ outstanding: 40, matched: 1500 }, { outstanding: 5 }];
    const request = { promptTokens: 4096 };
    const cli = createPolicy(policyOf("cache-aware")).decide(context(specs, request));
    expect(cli).toMatchObject({ origin: 0, reason: "cache-hit" });
    const lib = createPolicy(policyOf("cache-aware", library)).decide(context(specs, request));
    expect(lib).toMatchObject({ origin: 1, reason: "imbalanced" });
  });
});
