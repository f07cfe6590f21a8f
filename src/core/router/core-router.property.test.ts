/**
 * Stateful property test of `CoreRouter` (fast-check model-based commands): any sequence of
 * route, reroute, prefillFailed, cancel, complete, ingest, expire, settings changes (pools with
 * and without prefill and decode origins) and snapshot/restore, checked after every step
 * against a model that knows only which tickets are live, where each is leased and prefilled,
 * when its leases expire, and each origin's health. After every step: the router's outstanding
 * requests are exactly the model's live tickets, each origin's are its tickets and prefill
 * legs, no origin owns more than its capacity, and the router's and the index's invariants hold.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import type { EngineEvent, Health } from "../engine-events.ts";
import { POLICY_TYPES, policyOf } from "../policies/index.ts";
import type { RouteRequest } from "../route-request.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { OriginRole } from "../settings/pd-settings.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { CoreRouter } from "./core-router.ts";
import type { FailureKind, Outcome } from "./router-types.ts";

const IDS = ["a", "b", "c", "d", "e"];
const FAILURES: FailureKind[] = ["connect", "timeout", "status-3xx", "status-5xx", "status-429"];

interface Model {
  pool: PoolSettings;
  now: number;
  /** Live tickets: where each is leased, where its prefill leg is, when its leases expire. */
  live: Map<string, { origin: string; prefill: string | null; expires: number }>;
  health: Map<string, Health>;
  /** Routers built so far (fresh ones for restores); each gets its own ticket prefix. */
  routers: number;
}

interface Real {
  router: CoreRouter;
}

type Command = fc.Command<Model, Real>;

const settingsArb = fc
  .record({
    ids: fc.shuffledSubarray(IDS, { minLength: 1 }),
    kv: fc.array(fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }), {
      minLength: IDS.length,
      maxLength: IDS.length,
    }),
    policy: fc.constantFrom(...POLICY_TYPES),
    shadows: fc.subarray(["cache-aware", "llm-d"] as const, { maxLength: 2 }),
    kvCapacityTokens: fc.integer({ min: 64, max: 3000 }),
    chunkBytes: fc.constantFrom(256, 512),
    leaseMs: fc.constantFrom(1000, 5000),
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    failureThreshold: fc.integer({ min: 1, max: 3 }),
    /** Roles by origin when the pool is P/D (null: every origin serves alone). */
    roles: fc.option(
      fc.array(fc.constantFrom<OriginRole>("prefill", "prefill", "decode", "decode", "both"), {
        minLength: IDS.length,
        maxLength: IDS.length,
      }),
      { nil: null },
    ),
    /** A slow fleet keeps queues, so busy prefill origins happen. */
    prefillTokensPerSecond: fc.constantFrom(500, 10_000),
    disaggregation: fc.record({
      minUncachedTokens: fc.constantFrom(0, 128, 512, 2048),
      maxUncachedFraction: fc.constantFrom(0.3, 1),
      prefillBusyMs: fc.constantFrom(0, 50, 100_000),
    }),
  })
  .map((s) =>
    parsePool({
      origins: s.ids.map((id, i) => {
        // The last origin decodes, so a pool with prefill origins always has a decode origin.
        const role = s.roles ? (i === s.ids.length - 1 ? "decode" : s.roles[i]) : "both";
        const pd = role === "both" ? undefined : { protocol: "sglang" as const };
        return { id, url: `http://${id}.test`, kvCapacityTokens: s.kv[i], role, pd };
      }),
      disaggregation: s.disaggregation,
      prefillTokensPerSecond: s.prefillTokensPerSecond,
      policy: policyOf(s.policy),
      shadowPolicies: s.shadows.map((t) => policyOf(t)),
      kvCapacityTokens: s.kvCapacityTokens,
      chunkBytes: s.chunkBytes,
      leaseMs: s.leaseMs,
      retry: { maxAttempts: s.maxAttempts },
      circuit: { failureThreshold: s.failureThreshold, cooldownMs: 100 },
    }),
  );

/** Prompts of a few families that share prefixes, so matches, claims and evictions happen. */
const promptArb = fc
  .record({
    family: fc.nat(3),
    chunks: fc.integer({ min: 1, max: 12 }),
    shared: fc.nat(12),
    tail: fc.nat(4),
    extra: fc.nat(63),
    n: fc.constantFrom(undefined, 1, 1, 2),
  })
  .map(({ family, chunks, shared, tail, extra, n }) => {
    const chunkHashes: number[] = [];
    let h = family + 1;
    for (let i = 0; i < chunks; i++) {
      h = chainHash(h, i < shared ? i : tail * 1000 + i);
      chunkHashes.push(h);
    }
    return { chunkHashes, promptTokens: chunks * 64 + extra, n };
  });

/** Mostly small steps of time; now and then one past every lease and cool-down. */
const dtArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 6000) },
);

function advance(m: Model, dt: number): void {
  m.now += dt;
}

/** Tickets whose lease expired by `now`: the router drops them on route and expire. */
function expireModel(m: Model): number {
  let n = 0;
  for (const [ticket, t] of m.live) {
    if (t.expires > m.now) continue;
    m.live.delete(ticket);
    n++;
  }
  return n;
}

/** A live ticket picked by `k`, or an unknown one when there is none or `unknown` is set. */
function pickTicket(m: Model, k: number, unknown: boolean): string {
  const tickets = [...m.live.keys()];
  return unknown || tickets.length === 0
    ? "no-such-ticket"
    : (tickets[k % tickets.length] as string);
}

function check(m: Model, r: Real): void {
  const { router } = r;
  router.checkInvariants();
  const stats = router.stats(m.now);
  expect(router.outstanding).toBe(m.live.size);
  expect(stats.outstanding).toBe(m.live.size);
  expect(stats.origins.map((o) => o.id)).toEqual(m.pool.origins.map((o) => o.id));
  for (const o of stats.origins) {
    const live = [...m.live.values()];
    const mine = live.filter((t) => t.origin === o.id || t.prefill === o.id).length;
    expect(o.outstanding, `outstanding at ${o.id}`).toBe(mine);
    expect(o.ownedTokens, `owned at ${o.id}`).toBeLessThanOrEqual(o.capacityTokens);
    expect(o.health).toBe(m.health.get(o.id) ?? "up");
  }
}

/** A command that may always run (it finds its ticket at run time), checked after it ran. */
function command(name: string, step: (m: Model, r: Real) => void): Command {
  return {
    check: () => true,
    run: (m, r) => {
      step(m, r);
      check(m, r);
    },
    toString: () => name,
  };
}

const roleOf = (m: Model, id: string) => m.pool.origins.find((o) => o.id === id)?.role;

const route = (prompt: RouteRequest & { chunkHashes: number[] }, dt: number) =>
  command(`route(${prompt.chunkHashes.length} chunks, n ${prompt.n}, +${dt})`, (m, r) => {
    advance(m, dt);
    expireModel(m);
    const d = r.router.route(prompt, m.now);
    const ids = m.pool.origins.map((o) => o.id);
    if (d.ticket === null) {
      expect(d.origin).toBeNull();
      expect(d.reason).not.toBe("");
      expect(d.prefill).toBeNull();
      return;
    }
    const origin = d.origin as string;
    expect(ids).toContain(origin);
    expect(m.health.get(origin) ?? "up").toBe("up");
    expect(roleOf(m, origin)).not.toBe("prefill");
    // A P/D reason exactly in pools with P/D origins; a prefill leg exactly when remote.
    const pdPool = m.pool.origins.some((o) => o.role !== "both");
    expect(d.pdReason === null).toBe(!pdPool);
    expect(d.prefill !== null).toBe(d.pdReason === "pd:remote");
    if (d.prefill) {
      expect(roleOf(m, d.prefill.origin)).toBe("prefill");
      expect(roleOf(m, origin)).toBe("decode");
      expect(m.health.get(d.prefill.origin) ?? "up").toBe("up");
      expect(prompt.n ?? 1).toBe(1);
      expect(d.prefill.matchedTokens).toBeLessThanOrEqual(prompt.promptTokens);
    }
    expect(m.live.has(d.ticket)).toBe(false);
    expect(d.matchedTokens).toBeGreaterThanOrEqual(0);
    expect(d.matchedTokens).toBeLessThanOrEqual(prompt.promptTokens);
    expect(d.alternates).not.toContain(origin);
    expect(new Set(d.alternates).size).toBe(d.alternates.length);
    expect(d.alternates.length).toBeLessThanOrEqual(m.pool.retry.maxAttempts - 1);
    for (const a of d.alternates) expect(ids).toContain(a);
    for (const a of d.alternates) expect(roleOf(m, a)).not.toBe("prefill");
    const prefill = d.prefill?.origin ?? null;
    m.live.set(d.ticket, { origin, prefill, expires: m.now + m.pool.leaseMs });
  });

const reroute = (k: number, unknown: boolean, failure: FailureKind, next: string, dt: number) =>
  command(`reroute(#${k}${unknown ? "?" : ""}, ${failure}, ${next})`, (m, r) => {
    advance(m, dt);
    const ticket = pickTicket(m, k, unknown);
    const role = roleOf(m, next);
    const known = m.live.has(ticket) && role !== undefined && role !== "prefill";
    expect(r.router.reroute(ticket, failure, next, m.now) !== null).toBe(known);
    if (known) m.live.set(ticket, { origin: next, prefill: null, expires: m.now + m.pool.leaseMs });
  });

const prefillFailed = (k: number, unknown: boolean, failure: FailureKind, dt: number) =>
  command(`prefillFailed(#${k}${unknown ? "?" : ""}, ${failure})`, (m, r) => {
    advance(m, dt);
    const ticket = pickTicket(m, k, unknown);
    const t = m.live.get(ticket);
    const known = t !== undefined && t.prefill !== null;
    expect(r.router.prefillFailed(ticket, failure, m.now) !== null).toBe(known);
    // The decode origin is leased again with the prefill work: a new expiry.
    if (t && known) m.live.set(ticket, { ...t, prefill: null, expires: m.now + m.pool.leaseMs });
  });

const complete = (k: number, unknown: boolean, outcome: Outcome, dt: number) =>
  command(`complete(#${k}${unknown ? "?" : ""}, ${JSON.stringify(outcome)})`, (m, r) => {
    advance(m, dt);
    const ticket = pickTicket(m, k, unknown);
    expect(r.router.complete(ticket, outcome, m.now)).toBe(m.live.delete(ticket));
  });

const cancel = (k: number, unknown: boolean, dt: number) =>
  command(`cancel(#${k}${unknown ? "?" : ""})`, (m, r) => {
    advance(m, dt);
    const ticket = pickTicket(m, k, unknown);
    expect(r.router.cancel(ticket, m.now)).toBe(m.live.delete(ticket));
  });

const ingest = (origin: string, events: EngineEvent[], dt: number) =>
  command(`ingest(${origin}, ${JSON.stringify(events)})`, (m, r) => {
    advance(m, dt);
    const known = m.pool.origins.some((o) => o.id === origin);
    expect(r.router.ingest(origin, events, m.now)).toBe(known);
    if (!known) return;
    for (const e of events) if (e.type === "health") m.health.set(origin, e.status);
  });

const expire = (dt: number) =>
  command(`expire(+${dt})`, (m, r) => {
    advance(m, dt);
    expect(r.router.expire(m.now)).toBe(expireModel(m));
  });

const applySettings = (pool: PoolSettings) =>
  command(
    `applySettings(${pool.origins.map((o) => `${o.id}:${o.kvCapacityTokens ?? "-"}`)}, ` +
      `${pool.policy.type}, kv ${pool.kvCapacityTokens}, chunk ${pool.chunkBytes})`,
    (m, r) => {
      r.router.applySettings(pool);
      const ids = new Set(pool.origins.map((o) => o.id));
      // An origin that leaves takes its requests in flight (or its prefill legs) and its health.
      for (const [ticket, t] of m.live) {
        if (!ids.has(t.origin)) m.live.delete(ticket);
        else if (t.prefill !== null && !ids.has(t.prefill)) t.prefill = null;
      }
      for (const id of m.health.keys()) if (!ids.has(id)) m.health.delete(id);
      m.pool = pool;
    },
  );

/** Snapshot, then restore into the same router or a fresh one: the index comes back whole. */
const snapshotRestore = (fresh: boolean) =>
  command(`snapshotRestore(${fresh ? "fresh" : "same"})`, (m, r) => {
    const before = r.router.stats(m.now);
    const bytes = r.router.snapshot();
    if (fresh) {
      r.router = new CoreRouter(m.pool, { model: "m", seed: 5, ticketPrefix: `r${++m.routers}-` });
    }
    r.router.restore(bytes);
    // A restore starts again from the index alone: nothing in flight, every origin up.
    m.live.clear();
    m.health.clear();
    const after = r.router.stats(m.now);
    const { chunks, nodes, ownerships } = before.index;
    expect(after.index).toMatchObject({ chunks, nodes, ownerships });
    const held = (s: typeof before) =>
      s.origins.map((o) => [o.id, o.ownedTokens, o.capacityTokens]);
    expect(held(after)).toEqual(held(before));
  });

/** Which live ticket a command acts on, and (one time in ten) an unknown ticket instead. */
const kArb = fc.nat(50);
const unknownArb = fc.integer({ min: 0, max: 9 }).map((n) => n === 0);

const usageArb = fc.record({
  promptTokens: fc.option(fc.nat(800), { nil: undefined }),
  cachedTokens: fc.option(fc.nat(800), { nil: undefined }),
});
const prefillUsageArb = fc.option(usageArb, { nil: undefined });

const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  fc.record({
    ok: fc.constant(true),
    promptTokens: fc.option(fc.nat(800), { nil: undefined }),
    cachedTokens: fc.option(fc.nat(800), { nil: undefined }),
    prefill: prefillUsageArb,
  }),
  fc.record({
    ok: fc.constant(false),
    failure: fc.constantFrom<FailureKind>(...FAILURES),
    prefill: prefillUsageArb,
  }),
  fc.record({ ok: fc.constant(false), failure: fc.constant<FailureKind>("stream") }),
  fc.constant({ ok: false }),
);

const eventArb: fc.Arbitrary<EngineEvent> = fc.oneof(
  fc.record({
    type: fc.constant("load" as const),
    running: fc.nat(8),
    waiting: fc.nat(4),
    kvUsage: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
  fc.record({
    type: fc.constant("capacity" as const),
    kvCapacityTokens: fc.integer({ min: 1, max: 3000 }),
  }),
  fc.constant({ type: "cache-reset" as const }),
  fc.record({
    type: fc.constant("health" as const),
    status: fc.constantFrom<Health>("up", "up", "draining", "down"),
  }),
);

const commandsArb = fc.commands(
  [
    fc.tuple(promptArb, dtArb).map(([p, dt]) => route(p, dt)),
    fc.tuple(promptArb, dtArb).map(([p, dt]) => route(p, dt)),
    fc
      .tuple(kArb, unknownArb, fc.constantFrom(...FAILURES), fc.constantFrom(...IDS, "z"), dtArb)
      .map(([k, u, f, next, dt]) => reroute(k, u, f, next, dt)),
    fc
      .tuple(kArb, unknownArb, fc.constantFrom(...FAILURES), dtArb)
      .map(([k, u, f, dt]) => prefillFailed(k, u, f, dt)),
    fc
      .tuple(kArb, unknownArb, outcomeArb, dtArb)
      .map(([k, u, outcome, dt]) => complete(k, u, outcome, dt)),
    fc.tuple(kArb, unknownArb, dtArb).map(([k, u, dt]) => cancel(k, u, dt)),
    fc
      .tuple(
        fc.constantFrom(...IDS, "z"),
        fc.array(eventArb, { minLength: 1, maxLength: 3 }),
        dtArb,
      )
      .map(([origin, events, dt]) => ingest(origin, events, dt)),
    dtArb.map((dt) => expire(dt)),
    settingsArb.map((pool) => applySettings(pool)),
    fc.boolean().map((fresh) => snapshotRestore(fresh)),
  ],
  { maxCommands: 80, size: "max" },
);

describe("CoreRouter under any sequence of calls (model-based)", () => {
  it("keeps outstanding = live tickets and legs, owned <= capacity, and every invariant", () => {
    fc.assert(
      fc.property(settingsArb, commandsArb, (pool, commands) => {
        const setup = () => ({
          model: { pool, now: 0, live: new Map(), health: new Map(), routers: 0 },
          real: { router: new CoreRouter(pool, { model: "m", seed: 5, ticketPrefix: "r0-" }) },
        });
        fc.modelRun(setup, commands);
      }),
      // About 40 commands a run: a second or two.
      { numRuns: 200 },
    );
  }, 30_000);
});
