import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { type PolicyType, policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { PoolSettingsInput } from "../settings/settings-schema.ts";
import { CoreRouter } from "./core-router.ts";

const origins = ["a", "b", "c", "d"].map((id) => ({ id, url: `http://${id}.test` }));

function router(policy: PolicyType = "cost", extra: Partial<PoolSettingsInput> = {}, seed = 1) {
  return new CoreRouter(parsePool({ origins, policy: policyOf(policy), ...extra }), {
    model: "m",
    seed,
  });
}

/** A prompt of `chunks` chunks: `shared` chunks of prefix `family`, then a private tail `tail`. */
function prompt(family: number, shared: number, tail: number, chunks: number) {
  const hashes: number[] = [];
  let h = family;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i < shared ? i : tail * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: chunks * 64 };
}

describe("CoreRouter", () => {
  it.each<PolicyType>(["cost", "cache-aware", "prefix-hash", "hybrid", "llm-d", "dynamo"])(
    "%s: turns sharing a long prefix land together and see the match",
    (policy) => {
      const r = router(policy);
      const first = r.route(prompt(7, 60, 1, 64), 0);
      r.complete(first.ticket as string, { ok: true }, 5);
      const second = r.route(prompt(7, 60, 2, 64), 10);
      expect(second.origin).toBe(first.origin);
      expect(second.matchedTokens).toBe(60 * 64);
    },
  );

  it("distinct prefixes spread over the pool under cost", () => {
    const r = router("cost");
    const used = new Set<string | null>();
    for (let k = 0; k < 8; k++) used.add(r.route(prompt(100 + k, 32, 0, 32), 0).origin);
    expect(used.size).toBe(4);
  });

  it("a hot prefix under cost is replicated once its holder's queue outweighs a recompute", () => {
    const r = router("cost", { prefillTokensPerSecond: 1000 });
    const reasons = new Set<string>();
    const where = new Set<string | null>();
    for (let k = 0; k < 20; k++) {
      const d = r.route(prompt(5, 60, k, 64), 0); // none completes: the holder's queue grows
      reasons.add(d.reason);
      where.add(d.origin);
    }
    expect(reasons).toContain("replicate");
    expect(where.size).toBeGreaterThan(1);
  });

  it("complete releases the load; leases that are never completed expire", () => {
    const r = router("least-outstanding", { leaseMs: 5000 });
    const d1 = r.route(prompt(1, 4, 0, 4), 0);
    r.route(prompt(2, 4, 0, 4), 0);
    expect(r.stats(0).outstanding).toBe(2);
    expect(r.complete(d1.ticket as string, { ok: true }, 100)).toBe(true);
    expect(r.complete(d1.ticket as string, { ok: true }, 100)).toBe(false);
    expect(r.stats(100).outstanding).toBe(1);
    expect(r.expire(4999)).toBe(0);
    expect(r.expire(5000)).toBe(1);
    expect(r.stats(5000).origins.every((o) => o.outstanding === 0)).toBe(true);
  });

  it("a failure before the first byte takes back the speculative ownership", () => {
    const r = router("cache-aware");
    const base = prompt(3, 40, 0, 40);
    const d1 = r.route(base, 0);
    r.complete(d1.ticket as string, { ok: true }, 1);
    const longer = prompt(3, 40, 0, 60);
    const d2 = r.route(longer, 2);
    expect(d2).toMatchObject({ origin: d1.origin, reason: "cache-hit" });
    r.complete(d2.ticket as string, { ok: false, failure: "connect" }, 3);
    // The origin still holds the first 40 chunks, not the 20 it never prefilled.
    const d3 = r.route(longer, 4);
    expect(d3).toMatchObject({ origin: d1.origin, matchedTokens: 40 * 64 });
  });

  it("reroute moves the lease to the alternate and counts the failure", () => {
    const r = router("prefix-hash", { circuit: { failureThreshold: 2 } });
    const p = prompt(9, 8, 0, 8);
    const d = r.route(p, 0);
    const next = d.alternates[0] as string;
    expect(d.alternates).not.toContain(d.origin);
    expect(r.reroute(d.ticket as string, "status-5xx", next, 1)).toBe(0);
    expect(r.reroute("unknown", "status-5xx", next, 1)).toBeNull();
    const stats = r.stats(1);
    expect(stats.origins.find((o) => o.id === d.origin)).toMatchObject({
      outstanding: 0,
      consecutiveFailures: 1,
    });
    expect(stats.origins.find((o) => o.id === next)).toMatchObject({ outstanding: 1 });
    r.complete(d.ticket as string, { ok: true }, 2);
    // The alternate now holds the prompt; the failed origin does not.
    const owned = Object.fromEntries(r.stats(3).origins.map((o) => [o.id, o.ownedTokens]));
    expect(owned[next]).toBe(8 * 64);
    expect(owned[d.origin as string]).toBe(0);
    // A second failure opens the circuit: the origin is skipped.
    const d2 = r.route(prompt(9, 8, 0, 8), 4);
    if (d2.origin === d.origin)
      r.reroute(d2.ticket as string, "timeout", d2.alternates[0] as string, 5);
    else r.complete(d2.ticket as string, { ok: false, failure: "connect" }, 5);
    const open = r.stats(6).origins.filter((o) => o.circuit === "open");
    expect(open.length).toBeGreaterThan(0);
    for (let k = 0; k < 10; k++)
      expect(open.map((o) => o.id)).not.toContain(r.route(prompt(50 + k, 4, 0, 4), 7).origin);
  });

  it("cancel releases an unused ticket without blaming or crediting its origin", () => {
    const r = router("cache-aware");
    const p = prompt(31, 10, 0, 10);
    const d = r.route(p, 0);
    expect(r.cancel(d.ticket as string, 1)).toBe(true);
    expect(r.cancel(d.ticket as string, 1)).toBe(false);
    const stats = r.stats(1);
    expect(stats.outstanding).toBe(0);
    expect(stats.origins.find((o) => o.id === d.origin)).toMatchObject({
      ownedTokens: 0,
      consecutiveFailures: 0,
    });
    expect(stats.failures).toEqual({});
  });

  it("bug: a half-open probe ending without a verdict (client left) left the origin blocked", () => {
    const r = router("prefix-hash", { circuit: { failureThreshold: 1, cooldownMs: 1000 } });
    const p = prompt(41, 8, 0, 8);
    const first = r.route(p, 0);
    const target = first.origin as string;
    r.complete(first.ticket as string, { ok: false, failure: "status-5xx" }, 1);
    expect(r.stats(2).origins.find((o) => o.id === target)?.circuit).toBe("open");
    // After the cool-down the ring sends the probe to the target; the client then leaves.
    const probe = r.route(p, 1001);
    expect(probe.origin).toBe(target);
    r.complete(probe.ticket as string, { ok: false }, 1002);
    expect(r.route(p, 1003).origin).toBe(target);
  });

  it("bug: a ticket of a removed origin stayed live, and its end landed on the origin taking its slot", () => {
    const r = router("least-outstanding");
    const d = r.route(prompt(51, 8, 0, 8), 0);
    const gone = d.origin as string;
    const kept = origins.filter((o) => o.id !== gone);
    // "e" takes the removed origin's slot, the only free one.
    r.applySettings(parsePool({ origins: [...kept, { id: "e", url: "http://e.test" }] }));
    expect(r.outstanding).toBe(0);
    expect(r.complete(d.ticket as string, { ok: false, failure: "connect" }, 1)).toBe(false);
    expect(r.reroute(d.ticket as string, "connect", "e", 1)).toBeNull();
    const stats = r.stats(2);
    expect(stats.failures).toEqual({});
    expect(stats.origins.find((o) => o.id === "e")).toMatchObject({
      consecutiveFailures: 0,
      outstanding: 0,
    });
  });

  it("never routes when no origin is eligible, and says why", () => {
    const r = router("cost");
    for (const o of origins) r.ingest(o.id, [{ type: "health", status: "down" }], 0);
    expect(r.route(prompt(1, 4, 0, 4), 1)).toMatchObject({
      origin: null,
      ticket: null,
      reason: "no-eligible-origin",
    });
  });

  it("ingests load, capacity, cache-reset and health; rejects unknown origins", () => {
    const r = router("cost");
    const d = r.route(prompt(4, 32, 0, 32), 0);
    const id = d.origin as string;
    expect(r.ingest("nope", [{ type: "cache-reset" }], 1)).toBe(false);
    r.ingest(id, [{ type: "load", running: 3, waiting: 1, kvUsage: 0.5 }], 1);
    expect(r.stats(1).origins.find((o) => o.id === id)?.engine).toMatchObject({
      running: 3,
      waiting: 1,
    });
    r.ingest(id, [{ type: "capacity", kvCapacityTokens: 640 }], 2);
    expect(r.stats(2).origins.find((o) => o.id === id)).toMatchObject({
      capacityTokens: 640,
      ownedTokens: 640,
    });
    r.ingest(id, [{ type: "cache-reset" }], 3);
    expect(r.stats(3).origins.find((o) => o.id === id)?.ownedTokens).toBe(0);
    r.ingest(id, [{ type: "health", status: "draining" }], 4);
    for (let k = 0; k < 10; k++) expect(r.route(prompt(4, 32, 0, 32), 5).origin).not.toBe(id);
  });

  it("keeps an origin's measured prefill speed with its age, and cost routes by it", () => {
    const plain = router("cost");
    const measured = router("cost");
    const id = origins[2]?.id as string;
    expect(measured.stats(0).origins.find((o) => o.id === id)?.measuredPrefill).toBeNull();
    measured.ingest(id, [{ type: "prefill-rate", tokensPerSecond: 560, tokens: 3100 }], 100);
    expect(measured.stats(350).origins.find((o) => o.id === id)?.measuredPrefill).toEqual({
      tokensPerSecond: 560,
      tokens: 3100,
      ageMs: 250,
    });
    expect(measured.stats(350).origins.find((o) => o.id === id)?.prefill).toEqual({
      tokensPerSecond: 560,
      fixedMs: 0,
      samples: 1,
      priorTokensPerSecond: 10_000,
    });
    // Its peers measure the speed settings say (else they would take its correction).
    for (const o of origins) {
      if (o.id !== id)
        measured.ingest(
          o.id,
          [{ type: "prefill-rate", tokensPerSecond: 10_000, tokens: 4096 }],
          100,
        );
    }
    const sentTo = { plain: new Set<string | null>(), measured: new Set<string | null>() };
    for (let k = 0; k < 20; k++) {
      const p = prompt(30 + k, 20, k, 30);
      const a = plain.route(p, 200 + k);
      const b = measured.route(p, 200 + k);
      sentTo.plain.add(a.origin);
      sentTo.measured.add(b.origin);
      plain.complete(a.ticket as string, { ok: true }, 210 + k);
      measured.complete(b.ticket as string, { ok: true }, 210 + k);
    }
    // An origin 18 times slower than its peers gets no fresh prompt while they are idle.
    expect(sentTo.plain).toContain(id);
    expect(sentTo.measured).not.toContain(id);
  });

  it("engine truth shrinks an origin's capacity on misses and regrows it on hits", () => {
    const r = router("cache-aware", { kvCapacityTokens: 64_000 });
    const p = prompt(11, 100, 0, 100);
    r.complete(r.route(p, 0).ticket as string, { ok: true }, 1);
    const d = r.route(p, 2);
    const capacity = () =>
      r.stats(3).origins.find((o) => o.id === d.origin)?.capacityTokens as number;
    expect(capacity()).toBe(64_000);
    r.complete(d.ticket as string, { ok: true, promptTokens: 6400, cachedTokens: 0 }, 3);
    expect(capacity()).toBe(60_800);
    const hit = r.route(p, 4);
    r.complete(hit.ticket as string, { ok: true, promptTokens: 6400, cachedTokens: 6400 }, 5);
    expect(capacity()).toBe(64_000);
    expect(r.stats(6).accuracy).toMatchObject({
      reports: 2,
      predictedTokens: 12_800,
      cachedTokens: 6400,
    });
  });

  it("applySettings removes, adds and re-policies without losing what stays", () => {
    const r = router("cache-aware");
    const p = prompt(12, 16, 0, 16);
    const held = r.route(p, 0).origin as string;
    const remaining = origins.filter((o) => o.id !== held && o.id !== "a");
    r.applySettings(
      parsePool({
        origins: [
          ...remaining,
          { id: "e", url: "http://e.test" },
          ...origins.filter((o) => o.id === held && o.id !== "a"),
        ],
        policy: policyOf("cost"),
      }),
    );
    const stats = r.stats(1);
    expect(stats.policy).toBe("cost");
    expect(stats.origins.map((o) => o.id)).toContain("e");
    expect(stats.origins.map((o) => o.id)).not.toContain(held === "a" ? "zz" : "a");
    const again = r.route(p, 2);
    if (held !== "a") expect(again).toMatchObject({ origin: held, matchedTokens: 16 * 64 });
    else expect(again.matchedTokens).toBe(0);
  });

  it("a snapshot restored into a fresh router answers the same matches", () => {
    const r = router("cost");
    const prompts = Array.from({ length: 30 }, (_, k) => prompt(20 + (k % 6), 24, k, 40));
    for (const [k, p] of prompts.entries())
      r.complete(r.route(p, k).ticket as string, { ok: true }, k);
    const bytes = r.snapshot();
    // The restored router has its origins listed in another order: slots must follow ids.
    const fresh = new CoreRouter(
      parsePool({
        origins: [...origins].reverse(),
        policy: policyOf("cache-aware", { balanceAbsThreshold: 1e6 }),
      }),
      { model: "m" },
    );
    fresh.restore(bytes);
    const reference = new CoreRouter(
      parsePool({ origins, policy: policyOf("cache-aware", { balanceAbsThreshold: 1e6 }) }),
      { model: "m" },
    );
    reference.restore(bytes);
    for (const p of prompts.slice(0, 10)) {
      const a = fresh.route(p, 100);
      const b = reference.route(p, 100);
      expect(a.matchedTokens).toBeGreaterThan(0);
      expect({ origin: a.origin, matched: a.matchedTokens }).toEqual({
        origin: b.origin,
        matched: b.matchedTokens,
      });
    }
    expect(fresh.stats(0).index.chunks).toBe(reference.stats(0).index.chunks);
  });

  it("bug: after a restore, new origins skipped free slots below the highest saved (256 threw)", () => {
    const many = Array.from({ length: 256 }, (_, i) => ({ id: `o${i}`, url: `http://o${i}.test` }));
    const r = new CoreRouter(parsePool({ origins: many }), { model: "m" });
    r.applySettings(parsePool({ origins: many.slice(1) })); // slot 0 is free
    const bytes = r.snapshot();
    const full = parsePool({ origins: [...many.slice(1), { id: "new", url: "http://new.test" }] });
    const fresh = new CoreRouter(full, { model: "m" });
    fresh.restore(bytes);
    fresh.checkInvariants();
    expect(fresh.stats(0).origins.map((o) => o.id)).toContain("new");
    fresh.ingest("new", [{ type: "capacity", kvCapacityTokens: 6400 }], 0);
    expect(fresh.stats(0).origins.at(-1)).toMatchObject({ id: "new", capacityTokens: 6400 });
  });

  it("is deterministic for a seed", () => {
    const run = () => {
      const r = router("random", {}, 42);
      return Array.from({ length: 20 }, (_, k) => r.route(prompt(k, 4, 0, 4), k).origin);
    };
    expect(run()).toEqual(run());
  });
});
