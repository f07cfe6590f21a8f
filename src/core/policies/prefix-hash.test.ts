import { describe, expect, it } from "vitest";
import { context, type OriginSpec } from "../test-support/policy-context.ts";
import { createPolicy, policyOf } from "./index.ts";
import { rendezvousOrder } from "./rendezvous.ts";

/** Route `n` requests with one prefix; each stays in flight. Returns requests per origin. */
function hotPrefix(
  type: "prefix-hash" | "hybrid",
  params: Record<string, unknown>,
  n: number,
  origins = 4,
) {
  const policy = createPolicy(policyOf(type, params));
  const specs: OriginSpec[] = Array.from({ length: origins }, () => ({ outstanding: 0 }));
  const reasons: string[] = [];
  for (let k = 0; k < n; k++) {
    const d = policy.decide(context(specs, { chunkHashes: [42, 43, 44, 45, 46 + k] }));
    (specs[d.origin] as { outstanding: number }).outstanding++;
    reasons.push(d.reason);
  }
  return { counts: specs.map((s) => s.outstanding as number), reasons };
}

describe("prefix-hash", () => {
  it("bug: overflow walked the rendezvous order; SGLang takes the least-loaded origin under the bound", () => {
    const policy = createPolicy(policyOf("prefix-hash"));
    const ids = [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }];
    const ring = rendezvousOrder(42, [0, 1, 2, 3], (i) => ({
      id: ids[i]?.id as string,
      weight: 1,
    }));
    // The ring's origin is past 1.25 x (16 + 1) / 4 = 5.3; its next two pass, the last is idle.
    const load = [10, 3, 3, 0];
    const specs: OriginSpec[] = ids.map((o, i) => ({ ...o, outstanding: load[ring.indexOf(i)] }));
    const d = policy.decide(context(specs, { chunkHashes: [42] }));
    expect(d).toMatchObject({ origin: ring[3], reason: "overflow" });
    expect(d.ranking?.[0]).toBe(ring[3]);
  });

  it("admits the ring's origin at exactly the bound, as SGLang's <= does", () => {
    const policy = createPolicy(policyOf("prefix-hash"));
    const ring = rendezvousOrder(42, [0, 1, 2, 3], (i) => ({ id: `o${i}`, weight: 1 }));
    // Loads 5 (ring), 4, 3, 3: the bound is 1.25 x (15 + 1) / 4 = 5 exactly.
    const specs = (first: number): OriginSpec[] =>
      [0, 1, 2, 3].map((i) => ({
        outstanding: i === ring[0] ? first : [0, 4, 3, 3][ring.indexOf(i)],
      }));
    expect(policy.decide(context(specs(5), { chunkHashes: [42] })).reason).toBe("ring");
    expect(policy.decide(context(specs(6), { chunkHashes: [42] })).reason).toBe("overflow");
  });

  it("sends one prefix to one origin: a hot prefix overloads it without a bound", () => {
    const { counts } = hotPrefix("prefix-hash", { boundedLoad: null }, 40);
    expect(counts.filter((c) => c > 0)).toEqual([40]);
  });

  it("with bounded loads (1.25) the hot prefix spills to the least-loaded origins", () => {
    const { counts, reasons } = hotPrefix("prefix-hash", { boundedLoad: 1.25 }, 40);
    expect(Math.max(...counts)).toBeLessThanOrEqual(Math.ceil((1.25 * 40) / 4));
    expect(counts, "the others fill evenly").toEqual(expect.arrayContaining([9, 9, 9]));
    expect(reasons).toContain("overflow");
  });

  it("keys on the first prefixTokens only: different tails share an origin", () => {
    const policy = createPolicy(policyOf("prefix-hash", { boundedLoad: null, prefixTokens: 256 }));
    const specs = [{}, {}, {}, {}, {}, {}];
    const a = policy.decide(context(specs, { chunkHashes: [1, 2, 3, 4, 100, 101] }));
    const b = policy.decide(context(specs, { chunkHashes: [1, 2, 3, 4, 200] }));
    expect(b.origin).toBe(a.origin);
  });

  it("distinct prefixes spread over the origins", () => {
    const policy = createPolicy(policyOf("prefix-hash", { boundedLoad: null }));
    const specs = [{}, {}, {}, {}];
    const counts = [0, 0, 0, 0];
    for (let k = 0; k < 400; k++) {
      const i = policy.decide(context(specs, { chunkHashes: [k * 7919 + 13] })).origin;
      counts[i] = (counts[i] ?? 0) + 1;
    }
    for (const c of counts) expect(c).toBeGreaterThan(60);
  });

  it("removing an origin moves only the keys it held", () => {
    const policy = createPolicy(policyOf("prefix-hash", { boundedLoad: null }));
    const all = [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }];
    const three = [{ id: "a" }, { id: "b" }, { id: "d" }];
    for (let k = 0; k < 200; k++) {
      const req = { chunkHashes: [k * 104729 + 7] };
      const before = all[policy.decide(context(all, req)).origin]?.id;
      const after = three[policy.decide(context(three, req)).origin]?.id;
      if (before !== "c") expect(after).toBe(before);
    }
  });

  it("routes prompts with no full chunk by load, with a reason", () => {
    const policy = createPolicy(policyOf("prefix-hash"));
    const d = policy.decide(context([{ outstanding: 3 }, { outstanding: 1 }], { chunkHashes: [] }));
    expect(d).toMatchObject({ origin: 1, reason: "no-prefix" });
  });
});

describe("hybrid", () => {
  it("stays sticky while balanced, then overflows a hot prefix", () => {
    const { counts, reasons } = hotPrefix("hybrid", {}, 40);
    expect(reasons[0]).toBe("sticky");
    expect(reasons).toContain("overflow");
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(3);
  });

  it("tolerates more imbalance for a long cached context than for an uncached prompt", () => {
    const policy = createPolicy(policyOf("hybrid"));
    const target = policy.decide(context([{}, {}], { chunkHashes: [9] })).origin;
    const other = 1 - target;
    const specs = (matched: number): OriginSpec[] => {
      const s: OriginSpec[] = [{}, {}];
      s[target] = { outstanding: 6, matched };
      s[other] = { outstanding: 0 };
      return s;
    };
    expect(policy.decide(context(specs(0), { chunkHashes: [9] })).reason).toBe("overflow");
    expect(policy.decide(context(specs(4096), { chunkHashes: [9] })).reason).toBe("sticky");
  });
});
