/**
 * The contract every policy keeps, run against all of them (as Hono runs one suite over every
 * router): only eligible origins, a clear reason when there are none, a valid ranking, and
 * determinism under a seeded rng.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EngineLoad } from "../load-board/load-board.ts";
import { createRng } from "../rng.ts";
import { context, type OriginSpec } from "../test-support/policy-context.ts";
import { createPolicy, POLICY_TYPES, policyOf } from "./index.ts";
import type { PolicyContext } from "./policy.ts";

const engine: fc.Arbitrary<EngineLoad | null> = fc.option(
  fc.record({
    running: fc.nat(64),
    waiting: fc.nat(64),
    kvUsage: fc.double({ min: 0, max: 1, noNaN: true }),
    freshness: fc.double({ min: 0.01, max: 1, noNaN: true }),
  }),
  { nil: null },
);
const originSpec: fc.Arbitrary<OriginSpec> = fc.record({
  eligible: fc.boolean(),
  outstanding: fc.nat(100),
  queuedPrefillTokens: fc.nat(200_000),
  activeTokens: fc.nat(500_000),
  prefillingTokens: fc.nat(200_000),
  activeChunks: fc.nat(10_000),
  indexedTokens: fc.nat(500_000),
  added: fc.nat(300),
  engine,
  prefillTokensPerSecond: fc.integer({ min: 100, max: 50_000 }),
  weight: fc.constantFrom(0.5, 1, 2),
  matched: fc.nat(8192),
});
const pool = fc.array(originSpec, { minLength: 1, maxLength: 12 });
const request = fc.record({
  promptTokens: fc.integer({ min: 1, max: 16_384 }),
  chunkHashes: fc.array(fc.nat(2 ** 40), { maxLength: 64 }),
  sessionKey: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
});

describe.each(POLICY_TYPES)("policy contract: %s", (type) => {
  it("picks only an eligible origin, or -1 with a reason when none is", () => {
    fc.assert(
      fc.property(pool, request, fc.nat(), (specs, req, seed) => {
        const policy = createPolicy(policyOf(type));
        const ctx = context(specs, req, seed);
        const decision = policy.decide(ctx);
        const anyEligible = ctx.origins.some((o) => o.eligible);
        expect(decision.reason.length).toBeGreaterThan(0);
        if (!anyEligible) {
          expect(decision).toEqual({ origin: -1, reason: "no-eligible-origin" });
          return;
        }
        expect(ctx.origins[decision.origin]?.eligible).toBe(true);
        if (decision.ranking) {
          expect(new Set(decision.ranking).size).toBe(decision.ranking.length);
          for (const i of decision.ranking) expect(ctx.origins[i]?.eligible).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("handles an empty pool and all-ineligible pools", () => {
    const policy = createPolicy(policyOf(type));
    expect(policy.decide(context([])).origin).toBe(-1);
    const decision = policy.decide(context([{ eligible: false }, { eligible: false }]));
    expect(decision).toEqual({ origin: -1, reason: "no-eligible-origin" });
  });

  it("is deterministic for a seed over a sequence of requests", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(pool, request), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        (steps, seed) => {
          const run = () => {
            const policy = createPolicy(policyOf(type));
            const rng = createRng(seed);
            return steps.map(([specs, req]) => {
              const ctx: PolicyContext = { ...context(specs, req), rng };
              return policy.decide(ctx);
            });
          };
          expect(run()).toEqual(run());
        },
      ),
      { numRuns: 60 },
    );
  });

  it("a lone eligible origin always gets the request", () => {
    const policy = createPolicy(policyOf(type));
    for (let k = 0; k < 5; k++) {
      const decision = policy.decide(
        context([{ eligible: false }, { outstanding: 50 }, { eligible: false }]),
      );
      expect(decision.origin).toBe(1);
    }
  });
});
