import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { createRng } from "../rng.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { CoreRouter } from "./core-router.ts";
import { HotPrefixes } from "./hot-prefixes.ts";

/** Chained hashes of a prompt: `family` picks the first chunks, `tail` the rest. */
function prompt(family: number, chunks: number, tail = 0): number[] {
  const out: number[] = [];
  let h = family + 1;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i < 4 ? i : i * 1000 + tail);
    out.push(h);
  }
  return out;
}

const DAY = 86_400_000;

describe("HotPrefixes", () => {
  it("counts exactly while the prefixes fit, keyed by the first `depth` chunks", () => {
    const hot = new HotPrefixes({ capacity: 8, depth: 4, halfLifeMs: DAY });
    for (let k = 0; k < 30; k++) hot.observe(prompt(0, 10, k), 0);
    for (let k = 0; k < 10; k++) hot.observe(prompt(1, 6, k), 0);
    hot.observe(prompt(2, 2), 0);
    const top = hot.top(10, 0);
    expect(top.map((p) => [p.requests, p.depth, p.error])).toEqual([
      [30, 4, 0],
      [10, 4, 0],
      [1, 2, 0],
    ]);
    expect(top[0]?.hashes).toEqual(prompt(0, 4));
    expect(top[2]?.hashes).toEqual(prompt(2, 2));
  });

  it("finds every held prefix after heavy churn (table deletion)", () => {
    const hot = new HotPrefixes({ capacity: 5, halfLifeMs: 1000 });
    const rng = createRng(11);
    for (let k = 0; k < 5000; k++) {
      hot.observe(prompt(rng.int(40), 4), k);
      if (k % 97 === 0) hot.checkInvariants();
    }
    hot.checkInvariants();
  });

  // The old table's removal searched by key, and NaN equals nothing: it never stopped.
  it("a NaN hash never hangs observe", () => {
    const hot = new HotPrefixes({ capacity: 2, halfLifeMs: DAY });
    hot.observe([Number.NaN], 0);
    hot.observe(prompt(0, 4), 0);
    hot.observe(prompt(0, 4), 0);
    // Full: the NaN prefix holds the smallest count, so the new prefix takes its counter.
    hot.observe(prompt(1, 4), 0);
    const top = hot.top(2, 0);
    expect(top.map((p) => [p.requests, p.error])).toEqual([
      [2, 1],
      [2, 0],
    ]);
    expect(top[0]?.hashes).toEqual(prompt(1, 4));
    hot.checkInvariants();
  });

  it("ignores prompts shorter than one chunk", () => {
    const hot = new HotPrefixes();
    hot.observe([], 0);
    expect(hot.size).toBe(0);
    expect(hot.top(5, 0)).toEqual([]);
  });

  it("keeps the heavy hitters of a long-tailed stream in bounded memory (Space-Saving bounds)", () => {
    const capacity = 16;
    const hot = new HotPrefixes({ capacity, halfLifeMs: DAY });
    const rng = createRng(7);
    const truth = new Map<number, number>();
    const n = 20_000;
    for (let k = 0; k < n; k++) {
      // Five hot families with 10% each, and a tail of 50% over 10,000 families.
      const r = rng.next();
      const family = r < 0.5 ? Math.floor(r * 10) : 100 + Math.floor(rng.next() * 10_000);
      truth.set(family, (truth.get(family) ?? 0) + 1);
      hot.observe(prompt(family, 5), 0);
    }
    expect(hot.size).toBe(capacity);
    hot.checkInvariants();
    const top = hot.top(5, 0);
    const families = top.map((p) => [0, 1, 2, 3, 4].find((f) => prompt(f, 4)[3] === p.hashes[3]));
    expect(new Set(families)).toEqual(new Set([0, 1, 2, 3, 4]));
    for (const [i, p] of top.entries()) {
      const real = truth.get(families[i] as number) as number;
      expect(p.requests).toBeGreaterThanOrEqual(real);
      expect(p.requests - p.error).toBeLessThanOrEqual(real);
      expect(p.error).toBeLessThanOrEqual(n / capacity);
    }
  });

  it("decays: a count halves per half-life, and a steady stream reads as its rate", () => {
    const hot = new HotPrefixes({ halfLifeMs: 10_000 });
    for (let k = 0; k < 8; k++) hot.observe(prompt(0, 4), 0);
    expect(hot.top(1, 10_000)[0]?.requests).toBeCloseTo(4, 9);
    expect(hot.top(1, 30_000)[0]?.requests).toBeCloseTo(1, 9);

    const steady = new HotPrefixes({ halfLifeMs: 10_000 });
    // 5 requests per second for 100 s (10 half-lives): the rate converges to 5/s.
    for (let t = 0; t <= 100_000; t += 200) steady.observe(prompt(1, 4), t);
    expect(steady.top(1, 100_000)[0]?.ratePerSecond).toBeCloseTo(5, 0);
  });

  it("a prefix that went quiet gives way to the one that is hot now", () => {
    const hot = new HotPrefixes({ capacity: 4, halfLifeMs: 1000 });
    for (let k = 0; k < 100; k++) hot.observe(prompt(0, 4), 0);
    for (let k = 0; k < 20; k++) hot.observe(prompt(1, 4), 10_000);
    expect(hot.top(1, 10_000)[0]?.hashes).toEqual(prompt(1, 4));
  });

  it("stays finite over years of traffic (forward-decay rescaling)", () => {
    const hot = new HotPrefixes({ capacity: 4, halfLifeMs: 1000 });
    for (let t = 0; t < 3e10; t += 7e8) {
      hot.observe(prompt(0, 4), t);
      hot.observe(prompt(t % 3, 4), t + 1);
    }
    const now = 3e10;
    hot.observe(prompt(0, 4), now);
    for (const p of hot.top(4, now)) {
      expect(Number.isFinite(p.requests)).toBe(true);
      expect(Number.isFinite(p.error)).toBe(true);
    }
    expect(hot.top(1, now)[0]?.requests).toBeCloseTo(1, 6);
  });

  it.each([
    [{ capacity: 0 }, /capacity 0/],
    [{ capacity: 1.5 }, /capacity 1.5/],
    [{ depth: 65 }, /depth 65/],
    [{ halfLifeMs: 10 }, /halfLifeMs 10/],
  ])("rejects invalid options %o", (options, message) => {
    expect(() => new HotPrefixes(options)).toThrow(message);
  });

  it("clear forgets everything", () => {
    const hot = new HotPrefixes();
    hot.observe(prompt(0, 4), 0);
    hot.clear();
    expect(hot.size).toBe(0);
    hot.observe(prompt(1, 4), 5);
    expect(hot.top(5, 5).map((p) => p.requests)).toEqual([1]);
  });
});

describe("CoreRouter stats: hotPrefixes", () => {
  it("lists the hottest prefixes with their size and the origins holding them", () => {
    const origins = ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.test` }));
    const r = new CoreRouter(parsePool({ origins, policy: policyOf("prefix-hash") }), {
      model: "m",
    });
    for (let k = 0; k < 6; k++) {
      const d = r.route({ chunkHashes: prompt(0, 12, k), promptTokens: 12 * 64 }, k);
      r.complete(d.ticket as string, { ok: true }, k);
    }
    const d = r.route({ chunkHashes: prompt(1, 12), promptTokens: 12 * 64 }, 10);
    const [first, second] = r.stats(10).hotPrefixes;
    expect(first).toMatchObject({ id: prompt(0, 4)[3]?.toString(16), tokens: 256 });
    expect(first?.requests).toBeCloseTo(6, 2);
    expect(first?.origins).toHaveLength(1);
    expect(second).toMatchObject({ tokens: 256, origins: [d.origin] });
  });
});
