import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { PoolSettingsInput } from "../settings/settings-schema.ts";
import { CoreRouter } from "./core-router.ts";
import type { RouteDecision } from "./router-types.ts";

const pd = { protocol: "vllm-nixl" } as const;
const origins = [
  { id: "p1", url: "http://p1.test", role: "prefill", pd },
  { id: "p2", url: "http://p2.test", role: "prefill", pd },
  { id: "d1", url: "http://d1.test", role: "decode", pd },
  { id: "d2", url: "http://d2.test", role: "decode", pd },
] as const;

function router(extra: Partial<PoolSettingsInput> = {}) {
  const pool = parsePool({
    origins: origins.map((o) => ({ ...o })),
    policy: policyOf("least-outstanding"),
    prefillTokensPerSecond: 10_000,
    ...extra,
  });
  return new CoreRouter(pool, { model: "m", seed: 1 });
}

/** `chunks` chunks of 64 tokens: prefix `family`, private from `shared` on. */
function prompt(family: number, chunks: number, shared = chunks, tail = 0) {
  const hashes: number[] = [];
  let h = family;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i < shared ? i : tail * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: chunks * 64 };
}

const LONG = 64; // 4096 tokens: over minUncachedTokens (2048)
/** The rule with prefill origins serving whole requests while idle. */
const WHOLE = { prefillServesWhole: true };

function origin(r: CoreRouter, id: string) {
  const o = r.stats(0).origins.find((x) => x.id === id);
  if (!o) throw new Error(id);
  return o;
}

function remote(d: RouteDecision) {
  expect(d.pdReason).toBe("pd:remote");
  expect(d.prefill).not.toBeNull();
  return { decode: d.origin as string, prefill: d.prefill?.origin as string };
}

describe("CoreRouter in a P/D pool", () => {
  it("never gives a whole request, a decode or an alternate to a prefill origin by default", () => {
    const r = router({ retry: { maxAttempts: 4 } });
    for (let k = 0; k < 12; k++) {
      const d = r.route(prompt(k + 1, k % 2 ? 4 : LONG), 0);
      expect(["d1", "d2"]).toContain(d.origin);
      expect(d.alternates.every((a) => a === "d1" || a === "d2")).toBe(true);
    }
  });

  it("a long fresh prompt is prefilled remotely: both origins leased and claimed", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    expect(origin(r, decode).outstanding).toBe(1);
    expect(origin(r, prefill).outstanding).toBe(1);
    expect(r.outstanding).toBe(1);
    // The prefill work queues at the prefill origin, none at the decode origin.
    expect(origin(r, prefill).queuedPrefillTokens).toBeGreaterThan(4096);
    expect(origin(r, decode).queuedPrefillTokens).toBe(0);
    // Both hold the prompt in the index: the prefill origin after prefilling, the decode after
    // the transfer.
    expect(origin(r, decode).ownedTokens).toBe(LONG * 64);
    expect(origin(r, prefill).ownedTokens).toBe(LONG * 64);
    expect(r.stats(0).pd.byReason).toEqual({ "pd:remote": 1 });
    expect(r.stats(0).recent[0]).toMatchObject({ origin: decode, prefillOrigin: prefill });
  });

  it("the next turn, mostly cached on its decode origin, prefills there (pd:local-cached)", () => {
    const r = router({ policy: policyOf("cache-aware") });
    const first = r.route(prompt(1, LONG), 0);
    r.complete(first.ticket as string, { ok: true, prefill: { cachedTokens: 0 } }, 10);
    const next = r.route(prompt(1, LONG + 8, LONG, 1), 20);
    expect(next.origin).toBe(first.origin);
    expect(next.matchedTokens).toBe(LONG * 64);
    expect(next.pdReason).toBe("pd:local-cached");
    expect(next.prefill).toBeNull();
    expect(origin(r, next.origin as string).queuedPrefillTokens).toBeGreaterThan(0);
  });

  it("short prompts: idle prefill origins serve whole requests too, with prefillServesWhole (issue 14)", () => {
    // Eight short fresh prompts at once (least-outstanding): each prefill origin takes one,
    // and then none while that one's prefill is queued there. Before, they took none at all.
    const r = router({ retry: { maxAttempts: 4 }, disaggregation: WHOLE });
    const decisions = Array.from({ length: 8 }, (_, k) => r.route(prompt(k + 1, 4), 0));
    expect(r.stats(0).pd.byReason).toEqual({ "pd:whole-on-prefill": 2, "pd:local-cached": 6 });
    for (const id of ["p1", "p2"]) expect(origin(r, id).outstanding).toBe(1);
    for (const id of ["d1", "d2"]) expect(origin(r, id).outstanding).toBe(3);
    for (const d of decisions) {
      expect(d.prefill).toBeNull();
      expect(d.pdReason).toBe(
        d.origin?.startsWith("p") ? "pd:whole-on-prefill" : "pd:local-cached",
      );
      // Failover serves the client's bytes alone: decode origins only.
      expect(d.alternates.length).toBeGreaterThan(0);
      expect(d.alternates.every((a) => a === "d1" || a === "d2")).toBe(true);
    }
    // Served whole: the prefill origin is leased and claimed as any serving origin is.
    expect(origin(r, "p1").ownedTokens).toBe(4 * 64);
    expect(origin(r, "p1").queuedPrefillTokens).toBeGreaterThan(0);
    // Once done, both are idle again and take the next two.
    for (const d of decisions.filter((x) => x.pdReason === "pd:whole-on-prefill"))
      r.complete(d.ticket as string, { ok: true, cachedTokens: 0 }, 1000);
    const next = [9, 10].map((k) => r.route(prompt(k, 4), 1000).origin);
    expect(next.sort()).toEqual(["p1", "p2"]);
    r.checkInvariants();
  });

  it("a long prompt no origin holds is never served whole on a prefill origin, however idle", () => {
    const r = router({ disaggregation: WHOLE });
    for (let k = 0; k < 8; k++) {
      const d = r.route(prompt(k + 1, LONG), 0);
      expect(d.origin).toMatch(/^d/);
      expect(d.pdReason).not.toBe("pd:whole-on-prefill");
    }
  });

  it("a prefill origin with remote prefills queued is not offered", () => {
    const r = router({ disaggregation: WHOLE });
    for (let k = 0; k < 2; k++) remote(r.route(prompt(k + 1, LONG), 0));
    for (let k = 0; k < 6; k++) expect(r.route(prompt(k + 10, 4), 0).origin).toMatch(/^d/);
  });

  it("a request served whole on a prefill origin fails over to a decode origin", () => {
    const r = router({ circuit: { failureThreshold: 1 }, disaggregation: WHOLE });
    const decisions = [1, 2, 3].map((k) => r.route(prompt(k, 4), 0));
    const d = decisions.find((x) => x.pdReason === "pd:whole-on-prefill") as RouteDecision;
    const on = d.origin as string;
    const next = d.alternates[0] as string;
    expect(next).toMatch(/^d/);
    const before = origin(r, next).outstanding;
    expect(r.reroute(d.ticket as string, "connect", next, 1)).toBe(0);
    expect(origin(r, on)).toMatchObject({ outstanding: 0, ownedTokens: 0, circuit: "open" });
    expect(origin(r, next).outstanding).toBe(before + 1);
    expect(r.complete(d.ticket as string, { ok: true, cachedTokens: 0 }, 2)).toBe(true);
    r.checkInvariants();
  });

  it("a prompt the prefill origin already holds goes back to it", () => {
    const r = router();
    const first = r.route(prompt(1, LONG), 0);
    const { prefill } = remote(first);
    r.complete(first.ticket as string, { ok: true }, 10_000);
    // Another decode origin (least-outstanding), the same prefix: its prefill holder is chosen.
    const again = r.route(prompt(1, LONG + 40, LONG, 2), 20_000);
    expect(remote(again).prefill).toBe(prefill);
    expect(again.prefill?.matchedTokens).toBe(LONG * 64);
  });

  it("n > 1 is never disaggregated", () => {
    const r = router();
    const d = r.route({ ...prompt(1, LONG), n: 2 }, 0);
    expect(d.pdReason).toBe("pd:n>1");
    expect(d.prefill).toBeNull();
    expect(origin(r, "p1").outstanding + origin(r, "p2").outstanding).toBe(0);
  });

  it("busy prefill origins send the prefill to the decode origin (pd:prefill-busy)", () => {
    const r = router({ disaggregation: { prefillBusyMs: 500 } });
    const reasons: (string | null)[] = [];
    // 4096 tokens is 0.41 s of prefill at 10K/s: two each fill both prefill queues past 0.5 s.
    for (let k = 0; k < 6; k++) reasons.push(r.route(prompt(k + 1, LONG), 0).pdReason);
    expect(reasons.slice(0, 4)).toEqual(Array(4).fill("pd:remote"));
    expect(reasons.slice(4)).toEqual(["pd:prefill-busy", "pd:prefill-busy"]);
    expect(r.stats(0).pd.byReason).toEqual({ "pd:remote": 4, "pd:prefill-busy": 2 });
  });

  it("prefill origins that are down leave the decode origin to prefill (pd:no-prefill-origin)", () => {
    const r = router();
    r.ingest("p1", [{ type: "health", status: "down" }], 0);
    r.ingest("p2", [{ type: "health", status: "draining" }], 0);
    const d = r.route(prompt(1, LONG), 0);
    expect(d.pdReason).toBe("pd:no-prefill-origin");
    expect(d.origin).toMatch(/^d/);
  });

  it("a both origin chosen by the policy serves alone (pd:aggregated-origin)", () => {
    const pool = {
      origins: [{ id: "a", url: "http://a.test" }, ...origins.map((o) => ({ ...o }))],
    };
    const r = new CoreRouter(parsePool({ ...pool, policy: policyOf("round-robin") }), {
      model: "m",
    });
    const reasons = new Set<string | null>();
    for (let k = 0; k < 3; k++) reasons.add(r.route(prompt(k + 1, LONG), 0).pdReason);
    expect(reasons).toEqual(new Set(["pd:aggregated-origin", "pd:remote"]));
  });

  it("a pool without P/D origins gives no P/D reason", () => {
    const pool = parsePool({ origins: [{ id: "a", url: "http://a.test" }] });
    const d = new CoreRouter(pool, { model: "m" }).route(prompt(1, LONG), 0);
    expect(d.pdReason).toBeNull();
    expect(d.prefill).toBeNull();
  });

  it("prefillFailed: the prefill origin's claim and lease go, its failure counts, the decode prefills", () => {
    const r = router({ circuit: { failureThreshold: 1 } });
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    expect(r.prefillFailed(d.ticket as string, "status-5xx", 1)).toBe(0);
    expect(origin(r, prefill)).toMatchObject({ outstanding: 0, ownedTokens: 0, circuit: "open" });
    expect(origin(r, decode).outstanding).toBe(1);
    expect(origin(r, decode).queuedPrefillTokens).toBeGreaterThan(4000);
    expect(r.stats(1).failures).toEqual({ "status-5xx": 1 });
    expect(r.stats(1).pd.prefillFailed).toBe(1);
    // Once only: the ticket has no prefill leg any more.
    expect(r.prefillFailed(d.ticket as string, "status-5xx", 2)).toBeNull();
    expect(r.prefillFailed("no-such-ticket", "connect", 2)).toBeNull();
    // The request now completes as one served alone: the decode origin's cached tokens teach.
    expect(r.complete(d.ticket as string, { ok: true, cachedTokens: 0 }, 3)).toBe(true);
    expect(r.stats(3).accuracy.reports).toBe(1);
    expect(r.outstanding).toBe(0);
  });

  it("prefillFailed on a request prefilled locally is refused", () => {
    const r = router();
    const d = r.route({ ...prompt(1, LONG), n: 4 }, 0);
    expect(r.prefillFailed(d.ticket as string, "connect", 1)).toBeNull();
  });

  it("reroute after a decode failure serves alone elsewhere and drops the prefill leg unblamed", () => {
    const r = router({ circuit: { failureThreshold: 1 } });
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    const next = d.alternates[0] as string;
    expect(r.reroute(d.ticket as string, "connect", next, 1)).toBe(0);
    expect(origin(r, prefill)).toMatchObject({ outstanding: 0, ownedTokens: 0, circuit: "closed" });
    expect(origin(r, decode)).toMatchObject({ outstanding: 0, ownedTokens: 0, circuit: "open" });
    expect(origin(r, next).outstanding).toBe(1);
    expect(origin(r, next).queuedPrefillTokens).toBeGreaterThan(4000);
  });

  it("reroute to a prefill origin is refused", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    expect(r.reroute(d.ticket as string, "connect", "p1", 1)).toBeNull();
    expect(r.reroute(d.ticket as string, "connect", "p2", 1)).toBeNull();
  });

  it("complete learns capacity from the prefill leg's cached tokens, not the decode's", () => {
    const r = router();
    const warm = r.route(prompt(1, LONG), 0);
    const { prefill } = remote(warm);
    r.complete(warm.ticket as string, { ok: true }, 10_000);
    // The prefill holder is predicted to hold 4096 tokens; its leg reports none: a miss.
    const d = r.route(prompt(1, LONG + 40, LONG, 1), 20_000);
    expect(d.prefill).toEqual({ origin: prefill, matchedTokens: LONG * 64 });
    const before = origin(r, prefill).capacityTokens;
    const outcome = {
      ok: true,
      cachedTokens: 6000,
      prefill: { cachedTokens: 0, promptTokens: 6656 },
    };
    r.complete(d.ticket as string, outcome, 21_000);
    expect(origin(r, prefill).capacityTokens).toBeLessThan(before);
    expect(r.stats(21_000).accuracy).toMatchObject({
      reports: 1,
      predictedTokens: 4096,
      cachedTokens: 0,
    });
  });

  it("a decode that fails before its first byte, unheard of its prefill, takes both claims back", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    r.complete(d.ticket as string, { ok: false, failure: "timeout" }, 5);
    expect(origin(r, decode)).toMatchObject({ outstanding: 0, ownedTokens: 0 });
    expect(origin(r, prefill)).toMatchObject({ outstanding: 0, ownedTokens: 0 });
  });

  it("a prefill leg that answered keeps its claim even when the decode fails", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    const outcome = { ok: false, failure: "timeout", prefill: { cachedTokens: 0 } } as const;
    r.complete(d.ticket as string, outcome, 5);
    expect(origin(r, decode).ownedTokens).toBe(0);
    expect(origin(r, prefill).ownedTokens).toBe(LONG * 64);
  });

  it("cancel releases both legs and both claims", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    remote(d);
    expect(r.cancel(d.ticket as string, 1)).toBe(true);
    for (const o of r.stats(1).origins) expect(o).toMatchObject({ outstanding: 0, ownedTokens: 0 });
  });

  it("both legs expire together and count as one request", () => {
    const r = router({ leaseMs: 5000 });
    remote(r.route(prompt(1, LONG), 0));
    expect(r.expire(5000)).toBe(1);
    expect(r.stats(5000).origins.every((o) => o.outstanding === 0)).toBe(true);
    r.checkInvariants();
  });

  it("a prefill origin that leaves settings ends its legs; its requests go on decoding", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    r.applySettings(
      parsePool({ origins: origins.filter((o) => o.id !== prefill).map((o) => ({ ...o })) }),
    );
    r.checkInvariants();
    expect(r.outstanding).toBe(1);
    expect(origin(r, decode).outstanding).toBe(1);
    expect(r.complete(d.ticket as string, { ok: true }, 1)).toBe(true);
  });

  it("a decode origin that leaves takes its requests, and their prefill legs elsewhere end", () => {
    const r = router();
    const d = r.route(prompt(1, LONG), 0);
    const { decode, prefill } = remote(d);
    r.applySettings(
      parsePool({ origins: origins.filter((o) => o.id !== decode).map((o) => ({ ...o })) }),
    );
    r.checkInvariants();
    expect(r.outstanding).toBe(0);
    expect(origin(r, prefill).outstanding).toBe(0);
  });
});
