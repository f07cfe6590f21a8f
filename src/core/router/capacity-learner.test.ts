import { describe, expect, it } from "vitest";
import { asSlot } from "../origin-indexes.ts";
import { CapacityLearner } from "./capacity-learner.ts";

const A = asSlot(0);

/** A learner over 64-token chunks, and what it told the index last, by slot. */
function learner() {
  const enforced = new Map<number, number>();
  const l = new CapacityLearner(64, (slot, chunks) => enforced.set(slot, chunks));
  return { l, enforced };
}

const miss = { ok: true, promptTokens: 6400, cachedTokens: 0 };
const hit = { ok: true, promptTokens: 6400, cachedTokens: 6400 };
const predicted = { matchedChunks: 100, matchedTokens: 6400 };

describe("CapacityLearner", () => {
  it("takes settings, lets a report override them, and enforces only changes", () => {
    const { l, enforced } = learner();
    l.configure(A, 64_000);
    expect(enforced.get(A)).toBe(1000);
    enforced.clear();
    l.configure(A, 64_000);
    expect(enforced.size).toBe(0);
    l.report(A, 6400);
    expect(l.saved(A)).toEqual({
      reportedTokens: 6400,
      configuredChunks: 100,
      effectiveChunks: 100,
    });
    l.configure(A, 128_000);
    expect(l.effectiveChunks(A)).toBe(100);
  });

  it("shrinks 5% on a miss, down to 10% of configured, and regrows by confirmed matches", () => {
    const { l, enforced } = learner();
    l.configure(A, 64_000);
    l.learn(A, predicted, miss);
    expect(l.effectiveChunks(A)).toBe(950);
    for (let k = 0; k < 100; k++) l.learn(A, predicted, miss);
    expect(l.effectiveChunks(A)).toBe(100);
    l.learn(A, predicted, hit);
    expect(l.effectiveChunks(A)).toBe(200);
    expect(enforced.get(A)).toBe(200);
    // Within a chunk of the prediction is not a miss.
    l.learn(A, predicted, { ...hit, cachedTokens: 6400 - 64 });
    expect(l.effectiveChunks(A)).toBe(300);
    expect(l.accuracy).toEqual({
      reports: 103,
      predictedTokens: 103 * 6400,
      cachedTokens: 2 * 6400 - 64,
      promptTokens: 103 * 6400,
    });
  });

  it("a new configured size resets what was learned", () => {
    const { l } = learner();
    l.configure(A, 64_000);
    l.learn(A, predicted, miss);
    l.report(A, 32_000);
    expect(l.effectiveChunks(A)).toBe(500);
  });

  it("restores learned capacities, enforced at once and never above configured", () => {
    const { l, enforced } = learner();
    l.restore([
      { slot: 0, reportedTokens: null, configuredChunks: 1000, effectiveChunks: 700 },
      { slot: 2, reportedTokens: 640, configuredChunks: 10, effectiveChunks: 0 },
    ]);
    expect([...enforced]).toEqual([
      [0, 700],
      [2, 10],
    ]);
    l.configure(A, 64_000);
    expect(l.effectiveChunks(A)).toBe(700);
    l.configure(asSlot(2), 64_000);
    expect(l.effectiveChunks(asSlot(2))).toBe(10);
    l.forget(A);
    expect(() => l.effectiveChunks(A)).toThrow(RangeError);
  });
});
