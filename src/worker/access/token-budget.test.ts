import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TokenBudgets } from "./token-budget.ts";

/** Spends of one key: gaps between requests (ms) and prompt sizes (tokens). */
const spends = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 0, max: 30_000 }),
    tokens: fc.integer({ min: 1, max: 5000 }),
  }),
  { minLength: 1, maxLength: 200 },
);

describe("TokenBudgets", () => {
  it("over t minutes a key spends at most (t + 1) budgets plus one prompt", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), spends, (perMinute, requests) => {
        const budgets = new TokenBudgets();
        let now = 0;
        let spent = 0;
        let largest = 0;
        for (const { gapMs, tokens } of requests) {
          now += gapMs;
          if (budgets.spend("k", perMinute, tokens, now).ok) {
            spent += tokens;
            largest = Math.max(largest, tokens);
            expect(spent).toBeLessThanOrEqual(perMinute * (now / 60_000 + 1) + largest);
          }
        }
      }),
    );
  });

  it("settled at the engine's counts, over t minutes a key is charged at most (t + 1) budgets, the last estimate and the corrections of the requests in flight then", () => {
    // Each request is admitted at an estimate and settled later, after others may have been
    // admitted, at the engine's count (a quarter to four times the estimate).
    const events = fc.array(
      fc.oneof(
        fc.record({
          gapMs: fc.integer({ min: 0, max: 30_000 }),
          estimate: fc.integer({ min: 1, max: 5000 }),
          quarters: fc.integer({ min: 1, max: 16 }),
        }),
        fc.record({ settle: fc.nat() }),
      ),
      { minLength: 1, maxLength: 300 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), events, (perMinute, list) => {
        const budgets = new TokenBudgets();
        const inFlight: { estimate: number; counted: number }[] = [];
        let now = 0;
        let charged = 0;
        let lastEstimate = 0;
        let corrections = 0;
        for (const e of list) {
          if ("settle" in e) {
            const [r] = inFlight.splice(e.settle % Math.max(1, inFlight.length), 1);
            if (r === undefined) continue;
            budgets.settle("k", perMinute, r.counted - r.estimate, now);
            charged += r.counted - r.estimate;
            corrections += r.counted - r.estimate;
          } else {
            now += e.gapMs;
            if (!budgets.spend("k", perMinute, e.estimate, now).ok) continue;
            const counted = Math.ceil((e.estimate * e.quarters) / 4);
            inFlight.push({ estimate: e.estimate, counted });
            charged += e.estimate;
            lastEstimate = e.estimate;
            corrections = 0;
          }
          const bound = perMinute * (now / 60_000 + 1) + lastEstimate + corrections;
          expect(charged).toBeLessThanOrEqual(bound);
        }
      }),
    );
  });

  it("a refund fills the bucket to a minute's budget, no more; a charge puts it in debt", () => {
    const budgets = new TokenBudgets();
    expect(budgets.spend("a", 100, 50, 0).ok).toBe(true);
    budgets.settle("a", 100, -1000, 0);
    // Full, not 1,050: 150 leaves it 50 in debt, half a minute.
    expect(budgets.spend("a", 100, 150, 0).ok).toBe(true);
    expect(budgets.spend("a", 100, 1, 0)).toEqual({ ok: false, retryAfterMs: 30_000 });
    // A key with no bucket is full: charged 130, it owes 30.
    budgets.settle("b", 100, 130, 0);
    expect(budgets.spend("b", 100, 1, 0)).toEqual({ ok: false, retryAfterMs: 18_000 });
    budgets.settle("c", 100, -5, 0);
    expect(budgets.size).toBe(2);
  });

  it("a refused request passes at its Retry-After, and not a millisecond before it is due", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), spends, (perMinute, requests) => {
        const budgets = new TokenBudgets();
        let now = 0;
        for (const { gapMs, tokens } of requests) {
          now += gapMs;
          const spent = budgets.spend("k", perMinute, tokens, now);
          if (spent.ok) continue;
          expect(spent.retryAfterMs).toBeGreaterThan(0);
          // Refusing spends nothing: a millisecond later it is still refused, unless due.
          const early = budgets.spend("k", perMinute, tokens, now + 1);
          expect(early.ok).toBe(spent.retryAfterMs <= 1);
          now += spent.retryAfterMs;
          expect(budgets.spend("k", perMinute, tokens, now).ok).toBe(true);
        }
      }),
    );
  });

  it("a full bucket passes any prompt, even one larger than the budget; keys do not share", () => {
    const budgets = new TokenBudgets();
    expect(budgets.spend("a", 100, 1000, 0)).toEqual({ ok: true });
    // 900 in debt at 100 a minute: 9 minutes.
    expect(budgets.spend("a", 100, 1, 0)).toEqual({ ok: false, retryAfterMs: 540_000 });
    expect(budgets.spend("b", 100, 1, 0)).toEqual({ ok: true });
    expect(budgets.spend("a", 100, 1, 540_000)).toEqual({ ok: true });
  });

  it("holds a bounded number of buckets, dropping refilled ones first", () => {
    const budgets = new TokenBudgets();
    for (let i = 0; i < 5000; i++) budgets.spend(`key-${i}`, 60, 1, i);
    expect(budgets.size).toBeLessThanOrEqual(4096);
    // The newest key's bucket was kept: its spends add up.
    expect(budgets.spend("key-4999", 60, 60, 4999).ok).toBe(true);
    expect(budgets.spend("key-4999", 60, 1, 4999).ok).toBe(false);
  });
});
