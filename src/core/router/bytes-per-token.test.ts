import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BytesPerTokenLearner, MAX_RATIO, MIN_RATIO } from "./bytes-per-token.ts";

/** A deterministic stream of prompts: `ratio` bytes per token, off by up to `noise` either way. */
function stream(ratio: number, noise: number, seed: number): () => [number, number] {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    const tokens = 100 + (s % 4000);
    const jitter = 1 + noise * ((s / 2 ** 32) * 2 - 1);
    return [Math.round(tokens * ratio * jitter), tokens];
  };
}

function feed(l: BytesPerTokenLearner, next: () => [number, number], n: number, at = 0): number {
  for (let k = 0; k < n; k++) l.observe(...next(), at + k * 100);
  return at + n * 100;
}

describe("BytesPerTokenLearner", () => {
  it("starts at the prior, 4 bytes per token", () => {
    const l = new BytesPerTokenLearner();
    expect(l.ratio).toBe(4);
    expect(l.tokens(4000)).toBe(1000);
  });

  it("converges to 1.0 on a byte-level tokenizer's stream (llama.cpp here) within 300 requests", () => {
    const l = new BytesPerTokenLearner();
    feed(l, stream(1, 0, 1), 300);
    expect(l.ratio).toBeGreaterThan(0.98);
    expect(l.ratio).toBeLessThan(1.02);
    expect(l.tokens(4000)).toBeGreaterThanOrEqual(3900);
  });

  it("property: converges to ~3 on a code-like stream with ±20% noise", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const l = new BytesPerTokenLearner();
        feed(l, stream(3, 0.2, seed), 300);
        return Math.abs(l.ratio / 3 - 1) < 0.05;
      }),
      { numRuns: 100 },
    );
  });

  it("property: one wild sample moves a learned ratio by under 2%, and it stays in bounds", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 8, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
        fc.integer({ min: 32, max: 100_000 }),
        (ratio, wild, tokens) => {
          const l = new BytesPerTokenLearner();
          const at = feed(l, stream(ratio, 0.1, 3), 200);
          const before = l.ratio;
          l.observe(wild * tokens, tokens, at);
          return (
            Math.abs(l.ratio / before - 1) < 0.02 && l.ratio >= MIN_RATIO && l.ratio <= MAX_RATIO
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("property: any stream keeps the ratio within [0.5, 16]", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1e9 }), fc.integer({ min: 0, max: 1e6 }))),
        (samples) => {
          const l = new BytesPerTokenLearner();
          for (const [k, [b, t]] of samples.entries()) l.observe(b, t, k);
          return l.ratio >= MIN_RATIO && l.ratio <= MAX_RATIO;
        },
      ),
    );
  });

  it("follows a change of tokenizer (4 to 1 byte per token) within 300 requests", () => {
    const l = new BytesPerTokenLearner();
    const at = feed(l, stream(4, 0.1, 5), 300);
    feed(l, stream(1, 0.1, 6), 300, at);
    expect(Math.abs(l.ratio - 1)).toBeLessThan(0.05);
  });

  it("ignores short prompts, whose template tokens dominate", () => {
    const l = new BytesPerTokenLearner();
    expect(l.observe(20, 20, 0)).toBe(false);
    expect(l.ratio).toBe(4);
  });

  it("adopt takes what another router learned", () => {
    const l = new BytesPerTokenLearner();
    feed(l, stream(1, 0, 1), 300);
    const m = new BytesPerTokenLearner();
    m.adopt(l.saved());
    expect(m.saved()).toEqual(l.saved());
  });
});
