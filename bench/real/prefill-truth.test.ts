import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type PrefillTiming, prefillSpeeds } from "./prefill-truth.ts";

const at = (endMs: number, promptMs: number, promptTokens: number): PrefillTiming => ({
  endMs,
  promptMs,
  promptTokens,
});

describe("prefillSpeeds", () => {
  it("reads one slot's back-to-back prefills the same three ways", () => {
    const s = prefillSpeeds([at(1000, 1000, 500), at(3000, 2000, 1000), at(5000, 1000, 500)]);
    expect(s.busy).toBe(500);
    expect(s.counters).toBe(500);
    expect(s.alone).toBe(500);
    expect(s.aloneRequests).toBe(3);
  });

  it("counts a batch two prompts shared once, where the counters count it twice", () => {
    // Two prompts of 500 tokens in one 2 s batch: the engine did 1,000 tokens in 2 s.
    const s = prefillSpeeds([at(2000, 2000, 500), at(2000, 2000, 500), at(4000, 1000, 500)]);
    expect(s.busy).toBe(500);
    expect(s.counters).toBeCloseTo(1500 / 5, 9);
    expect(s.alone).toBe(500);
    expect(s.aloneRequests).toBe(1);
  });

  it("leaves out of `alone` a prefill that overlaps a later one, or one inside an earlier", () => {
    const s = prefillSpeeds([at(3000, 3000, 300), at(2000, 1000, 900), at(5000, 1000, 400)]);
    expect(s.aloneRequests).toBe(1);
    expect(s.alone).toBe(400);
    expect(s.busy).toBeCloseTo((1000 * 1600) / 4000, 9);
  });

  it("has no speed without prefilled tokens (all cached)", () => {
    expect(prefillSpeeds([at(100, 5, 0)])).toEqual({
      busy: null,
      alone: null,
      aloneRequests: 0,
      counters: null,
      line: null,
    });
  });

  it("reads a prefill's fixed cost into the line's intercept, where the counters fold it in", () => {
    // 50 ms per prefill plus 2 ms a token (500 tokens/s), and one prefill a co-tenant slowed 4x.
    const timings = [20, 50, 100, 200, 400, 800].map((n, i) => at(10_000 * i, 50 + 2 * n, n));
    timings.push(at(100_000, 4 * (50 + 2 * 300), 300));
    const s = prefillSpeeds(timings);
    expect(s.line?.tokensPerSecond).toBeCloseTo(500, 6);
    expect(s.line?.fixedMs).toBeCloseTo(50, 6);
    expect(s.counters as number).toBeLessThan(0.8 * 500);
  });

  it("never reads the counters faster than the engine's busy time", () => {
    const timing = fc.record({
      endMs: fc.integer({ min: 0, max: 100_000 }),
      promptMs: fc.integer({ min: 1, max: 5000 }),
      promptTokens: fc.integer({ min: 1, max: 2000 }),
    });
    fc.assert(
      fc.property(fc.array(timing, { minLength: 1, maxLength: 30 }), (timings) => {
        const s = prefillSpeeds(timings);
        expect(s.counters as number).toBeLessThanOrEqual((s.busy as number) * (1 + 1e-12));
        if (s.aloneRequests === timings.length) expect(s.alone).toBeCloseTo(s.busy as number, 6);
      }),
    );
  });
});
