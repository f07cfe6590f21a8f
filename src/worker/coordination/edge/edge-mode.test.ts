import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import type { CoordinatorState } from "../../objects/edge-rpc-types.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import {
  coordinatorState,
  edgePool,
  type Isolate,
  isolate,
  okReport,
  recordsArrive,
  ref,
  settle,
} from "../../test/edge-isolates.ts";
import {
  admin,
  chat,
  conversation,
  engineBatch,
  origin,
  pool,
  postSigned,
  putSettings,
  signBatch,
  waitFor,
} from "../../test/helpers.ts";
import type { Routed } from "../shared/routed.ts";
import type { EdgePool } from "./replica-registry.ts";
import { routeAtEdge } from "./route-at-edge.ts";
import { ABANDON_GRACE_MS, syncOnce } from "./sync-loop.ts";

const SHARED = "edge-shared";
const DEGRADED = "edge-degraded";
const LOOPED = "edge-looped";
const WEBHOOK = "edge-webhook";
const HTTP = "edge-http";
const SHARDED = "edge-sharded";
const ANNOUNCED = "edge-announced";
const PUSHED = "edge-pushed";
const CENSUS = "edge-census";
/** Syncs only when asked (warmMs 0) and soon (flushMs 10), so each test decides when. */
const EDGE = { flushMs: 10, warmMs: 0, rootIntervalMs: 50 };
/** Warm for 1.5 s after a request: loops hold their push sockets that long. */
const PUSH = { ...EDGE, warmMs: 1500 };

beforeAll(async () => {
  const origins = (tag: string) => [1, 2, 3, 4].map((n) => origin(`edge-${tag}-${n}`));
  const edge = (tag: string) => pool(origins(tag), { coordination: "edge", edge: EDGE });
  await putSettings({
    pools: {
      [SHARED]: edge("s"),
      [DEGRADED]: edge("d"),
      [LOOPED]: edge("l"),
      [WEBHOOK]: edge("w"),
      [HTTP]: edge("h"),
      [ANNOUNCED]: edge("a"),
      [PUSHED]: pool(origins("p"), { coordination: "edge", edge: PUSH }),
      [CENSUS]: edge("c"),
      [SHARDED]: pool(origins("g"), {
        coordination: "edge",
        edge: { ...EDGE, coordinators: 2 },
      }),
    },
  });
});

function request(model: string, topic: string, turns: number) {
  const key = promptKey({ model, messages: conversation(topic, turns) });
  return { chunkHashes: key.chunkHashes, promptTokens: key.promptTokens };
}

function route(
  iso: Isolate,
  r: PoolRef,
  topic: string,
  turns: number,
  e: Env = env,
): Promise<Routed> {
  return routeAtEdge(e, iso.ctx, r, request(r.model, topic, turns), { registry: iso.registry });
}

/** An env whose coordinators do not answer while `outage.on`. */
function withOutage(): { env: Env; outage: { on: boolean } } {
  const outage = { on: true };
  const COORDINATOR = {
    idFromName: (name: string) => env.COORDINATOR.idFromName(name),
    get: (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) =>
      outage.on
        ? { sync: () => Promise.reject(new Error("coordinator down")) }
        : env.COORDINATOR.get(id, options),
  };
  return { env: { ...env, COORDINATOR } as unknown as Env, outage };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two isolates of the PUSHED pool, each holding a push socket. */
interface PushPair {
  readonly a: Isolate;
  readonly b: Isolate;
  readonly pa: EdgePool;
  readonly pb: EdgePool;
  /** The coordinator's records applied before either routed (earlier tests' records). */
  readonly before: number;
}

/**
 * Wait until every record the pair made reached the coordinator, once each, and none waits or
 * is in flight: applied is `before` plus the records both batched (a batch in flight was
 * batched, not applied). The coordinator's state then, whose log holds every claim they made.
 */
async function pairApplied(p: PushPair, what: string): Promise<CoordinatorState> {
  let state: CoordinatorState | undefined;
  await waitFor(
    async () => {
      state = await coordinatorState(PUSHED);
      const [a, b] = [p.pa.replica, p.pb.replica];
      const batched = a.counters.recordsBatched + b.counters.recordsBatched;
      return (
        a.waiting.records + b.waiting.records === 0 &&
        state.counters.recordsApplied === p.before + batched
      );
    },
    5000,
    what,
  );
  return state as CoordinatorState;
}

/**
 * Two isolates pushing, both warm from now and every record so far applied: the cold requests'
 * bootstraps and sockets take what a loaded machine gives them (1.45 s of the 1.5 s warmMs
 * once), so what a test checks gets its warm window from here, not from them. A loop gone cold
 * in the meantime closed its socket, as it should; the second request opens another.
 */
/** Pairs made so far: each attempt's isolates are named apart. */
let pairs = 0;

async function pushPair(r: PoolRef, name: string): Promise<PushPair> {
  const before = (await coordinatorState(PUSHED)).counters.recordsApplied;
  // A retried attempt gets isolates of its own; whatever an attempt ends with, its loops end
  // (their sockets close) before the next test counts the coordinator's records.
  const tag = `${name}-${++pairs}`;
  const [a, b] = [isolate(`iso-${tag}-a`), isolate(`iso-${tag}-b`)];
  onTestFinished(async () => {
    await settle(a);
    await settle(b);
  });
  const [pa, pb] = [edgePool(a, r), edgePool(b, r)];
  // Cold: each bootstraps with one sync, then its loop opens a socket in its request.
  await route(a, r, `${name}-warm-a`, 0);
  await route(b, r, `${name}-warm-b`, 0);
  // Warm again: the checked part's window starts here.
  await route(a, r, `${name}-rewarm-a`, 0);
  await route(b, r, `${name}-rewarm-b`, 0);
  const p = { a, b, pa, pb, before };
  await waitFor(
    async () =>
      pa.socket !== null && pb.socket !== null && (await coordinatorState(PUSHED)).sockets === 2,
    5000,
    "both sockets",
  );
  await pairApplied(p, "the warm-up records applied");
  return p;
}

/**
 * Wait until every record the pair made was applied (`pairApplied`) and `to`'s view holds
 * the coordinator's log as it then stood: the other isolate's claims reached `to`.
 */
async function hears(p: PushPair, to: EdgePool): Promise<void> {
  const { epoch, logVersion } = await pairApplied(p, "the records applied");
  await waitFor(
    () => to.replica.since?.epoch === epoch && to.replica.since.version >= logVersion,
    5000,
    "the records heard",
  );
}

describe("edge coordination across isolates", () => {
  it("a conversation one isolate routed is a cache hit in another after one sync each", async () => {
    const r = await ref(SHARED);
    const a = isolate("iso-a");
    const b = isolate("iso-b");
    await syncOnce(edgePool(a, r), env);
    await syncOnce(edgePool(b, r), env);
    const first = await route(a, r, "tides", 1);
    expect(first.coordination).toBe("edge");
    expect(first.objectMs).toBeNull();
    await first.ledger.complete(first.decision.ticket as string, okReport(first.decision));
    await settle(a);
    await syncOnce(edgePool(b, r), env);
    const second = await route(b, r, "tides", 2);
    expect(second.decision.origin).toBe(first.decision.origin);
    expect(second.decision.reason).toBe("cache-hit");
    expect(second.decision.matchedTokens).toBeGreaterThan(0);
    await settle(b);
    // a's request ended; b's is the one in flight.
    const state = await coordinatorState(SHARED);
    const inFlight = state.router.origins.filter((o) => o.outstanding > 0);
    expect(inFlight.map((o) => [o.id, o.outstanding])).toEqual([[first.decision.origin, 1]]);
  });

  it("three isolates see each other's requests in flight in the load they route on", async () => {
    const r = await ref(SHARED);
    const isolates = ["iso-1", "iso-2", "iso-3"].map(isolate);
    for (const iso of isolates) await syncOnce(edgePool(iso, r), env);
    for (const [i, iso] of isolates.entries()) {
      for (let n = 0; n < 4; n++) await route(iso, r, `load-${i}-${n}`, 0);
    }
    for (const iso of isolates) await settle(iso);
    const first = isolates[0] as Isolate;
    await syncOnce(edgePool(first, r), env);
    const seen = edgePool(first, r).replica.loads(Date.now());
    // Every isolate's 4 requests (and the first test's one still in flight), spread out.
    expect(seen.reduce((s, o) => s + o.load.outstanding, 0)).toBe(13);
    expect(Math.max(...seen.map((o) => o.load.outstanding))).toBeLessThanOrEqual(5);
  });

  it("a coordinator that does not answer leaves the isolate routing on its own view; its records arrive later", async () => {
    const r = await ref(DEGRADED);
    const iso = isolate("iso-degraded");
    const held = edgePool(iso, r);
    await syncOnce(held, env);
    const { env: down } = withOutage();
    const first = await route(iso, r, "outage", 1, down);
    await first.ledger.complete(first.decision.ticket as string, okReport(first.decision));
    await waitFor(() => held.replica.degraded, 2000, "the failed sync");
    // Still routing, on its own view: the next turn finds the origin it chose.
    const second = await route(iso, r, "outage", 2, down);
    expect(second.decision.origin).toBe(first.decision.origin);
    expect(second.decision.reason).toBe("cache-hit");
    await second.ledger.complete(second.decision.ticket as string, okReport(second.decision));
    expect((await coordinatorState(DEGRADED)).counters.recordsApplied).toBe(0);
    // The coordinator is back: every record the replica kept arrives, each applied once.
    await recordsArrive(held, DEGRADED);
    expect(held.replica.degraded).toBe(false);
    // Both requests' routes and ends: 2 records, or 3 when the first route left before its end.
    expect(held.replica.counters.recordsBatched).toBeGreaterThanOrEqual(2);
    const inFlight = await coordinatorState(DEGRADED);
    expect(inFlight.router.origins.reduce((n, o) => n + o.outstanding, 0)).toBe(0);
    await settle(iso);
  });

  it("records flush from waitUntil alone; a cold isolate's first request waits for the summary", async () => {
    const r = await ref(LOOPED);
    const a = isolate("iso-loop-a");
    const b = isolate("iso-loop-b");
    const first = await route(a, r, "loop", 1);
    await first.ledger.complete(first.decision.ticket as string, okReport(first.decision));
    await settle(a);
    // Bootstrapped before it routed; its records reached the coordinator with no hand sync.
    const counters = edgePool(a, r).replica.counters;
    expect(counters.bootstraps).toBe(1);
    expect(counters.recordsBatched).toBeGreaterThan(0);
    expect((await coordinatorState(LOOPED)).counters.recordsApplied).toBe(counters.recordsBatched);
    // b has never synced: its very first request finds the conversation a routed.
    const later = await route(b, r, "loop", 2);
    expect(edgePool(b, r).replica.counters.bootstraps).toBe(1);
    expect(later.decision.origin).toBe(first.decision.origin);
    expect(later.decision.reason).toBe("cache-hit");
    await settle(b);
  });

  it("a long prefill's routing returns once its record reached the coordinator (announced first)", async () => {
    const r = await ref(ANNOUNCED);
    const iso = isolate("iso-announce");
    const warm = await route(iso, r, "announce-warm", 0);
    await warm.ledger.complete(warm.decision.ticket as string, okReport(warm.decision));
    await settle(iso);
    const applied = (await coordinatorState(ANNOUNCED)).counters.recordsApplied;
    // 50,000 tokens: 5 s of prefill at the default 10,000 tokens/s, far past 10 x the lag.
    const long = { ...request(r.model, "announce-long", 0), promptTokens: 50_000 };
    const routed = await routeAtEdge(env, iso.ctx, r, long, { registry: iso.registry });
    // Before the origin fetch, the coordinator answered the sync that carried it (a request
    // that did not wait would find its batch still in flight: startAt null), and holds it.
    const ticket = routed.decision.ticket as string;
    expect(edgePool(iso, r).replica.startAt(ticket, Date.now() + 60_000)).not.toBeNull();
    const state = await coordinatorState(ANNOUNCED);
    expect(state.counters.recordsApplied).toBe(applied + 1);
    expect(state.router.origins.find((o) => o.id === routed.decision.origin)?.outstanding).toBe(1);
    await settle(iso);
  });

  it("a request waiting on a sync that never settles (the request that sent it died) goes on within routeTimeoutMs, not never", async () => {
    const r = await ref(ANNOUNCED);
    const dead = () => {
      // A sync another request sent before it died: in flight for the replica, and its
      // promise never settles (workerd drops a dead request's continuations).
      const held = edgePool(iso, r);
      held.replica.startSync(Date.now());
      held.inFlight = { token: {}, startedAt: Date.now() };
    };
    const answers = (routing: Promise<Routed>) =>
      Promise.race([
        routing.then(() => true),
        sleep(r.pool.routeTimeoutMs + 1000).then(() => false),
      ]);
    // A cold isolate's first request waits for its bootstrap.
    const iso = isolate("iso-dead-sync");
    dead();
    expect(await answers(route(iso, r, "dead-cold", 0))).toBe(true);
    // A long prefill waits for the sync that carries its record.
    await settle(iso);
    dead();
    const long = { ...request(r.model, "dead-long", 0), promptTokens: 50_000 };
    const routing = routeAtEdge(env, iso.ctx, r, long, { registry: iso.registry });
    expect(await answers(routing)).toBe(true);
  });

  it("defect F: a request finding a sync another request sent, which died, gets its view from a sync of its own", async () => {
    const r = await ref(ANNOUNCED);
    const iso = isolate("iso-defect-f");
    const held = edgePool(iso, r);
    // Another request's sync, sent just under routeTimeoutMs + ABANDON_GRACE_MS ago: that
    // request died, and the promise it made never settles (workerd dropped its continuations).
    held.replica.startSync(Date.now());
    const startedAt = Date.now() - r.pool.routeTimeoutMs - ABANDON_GRACE_MS + 50;
    held.inFlight = { token: {}, startedAt };
    // A cold request: it waits for one sync (within routeTimeoutMs) before it routes.
    const routed = await route(iso, r, "defect-f", 0);
    expect(routed.decision.origin).not.toBeNull();
    // Its wait did not hang on the dead request's promise: it declared that sync failed and
    // synced itself, so it routed on the pool's view (it waited out its deadline blind).
    expect(held.replica.counters.answers).toBeGreaterThanOrEqual(1);
    expect(held.replica.counters.bootstraps).toBe(1);
    await settle(iso);
  });

  it("a cold isolate whose coordinator does not answer routes at once on its own view", async () => {
    const r = await ref(LOOPED);
    const iso = isolate("iso-cold-down");
    const { env: down, outage } = withOutage();
    const first = await route(iso, r, "cold-down", 0, down);
    expect(first.decision.origin).not.toBeNull();
    expect(edgePool(iso, r).replica.degraded).toBe(true);
    // Known down: the next request does not wait for a sync.
    const syncs = edgePool(iso, r).replica.counters.syncs;
    await route(iso, r, "cold-down-2", 0, down);
    expect(edgePool(iso, r).replica.counters.syncs).toBe(syncs);
    // The coordinator answers again: the loop, backing off meanwhile, bootstraps and sends.
    outage.on = false;
    const held = edgePool(iso, r);
    await settle(iso);
    expect(held.replica.degraded).toBe(false);
    expect(held.replica.counters.bootstraps).toBe(1);
    expect(held.replica.counters.failures).toBeLessThan(12);
    expect(held.replica.waiting.records).toBe(0);
  });

  // Retried: in one CI run of 2 on a quiet machine (after the warm-up above), a's batch went by
  // sync (uploads 0) while b heard it and everything else held, as in 2 of 16 loaded runs
  // before; not explained (the sync answer crossing a frame, fixed in replica-sync.ts, was not
  // it). Left open.
  it("push: batches go up a real WebSocket and frames bring them to another isolate, with no sync", {
    retry: 2,
  }, async () => {
    const r = await ref(PUSHED);
    const p = await pushPair(r, "push");
    const { a, b, pa, pb } = p;
    const syncs = [pa.replica.counters.syncs, pb.replica.counters.syncs];
    const first = await route(a, r, "push-conv", 0);
    // a's record goes up its socket; the coordinator's next frame reaches b.
    await hears(p, pb);
    const second = await route(b, r, "push-conv", 1);
    expect(second.decision.origin).toBe(first.decision.origin);
    expect(second.decision.reason).toBe("cache-hit");
    // a's batch was acknowledged in a frame: pushing, a has nothing in flight or waiting to
    // upload (`waiting` alone does not count the batch in flight). `hears` saw it applied once.
    await waitFor(
      () => pa.socket !== null && pa.replica.nextUploadAt(Date.now()) === null,
      5000,
      "a's batch acknowledged",
    );
    const state = await coordinatorState(PUSHED);
    expect(state.counters.frames).toBeGreaterThan(0);
    expect(pa.replica.counters.uploads).toBeGreaterThan(0);
    expect([pa.replica.counters.syncs, pb.replica.counters.syncs]).toEqual(syncs);
    await settle(a);
    await settle(b);
    // Their loops ended with their requests' warmth: the sockets closed with them.
    expect(pa.socket).toBeNull();
    await waitFor(
      async () => (await coordinatorState(PUSHED)).sockets === 0,
      5000,
      "sockets closed",
    );
  });

  // Retried like the test above: it shares its warm-up and its exposure to a loaded machine.
  it("push: a closed socket falls back to sync, and the other isolate still hears the records", {
    retry: 2,
  }, async () => {
    const r = await ref(PUSHED);
    const p = await pushPair(r, "push-close");
    const { a, b, pa, pb } = p;
    // a's socket closes (as a coordinator restart or a network fault would close it).
    pa.socket?.ws.close(1011, "gone");
    await waitFor(() => pa.socket === null, 5000, "a's socket closed");
    const syncs = pa.replica.counters.syncs;
    const first = await route(a, r, "push-close-conv", 0);
    await hears(p, pb);
    expect(pa.replica.counters.syncs).toBeGreaterThan(syncs);
    const second = await route(b, r, "push-close-conv", 1);
    expect(second.decision.origin).toBe(first.decision.origin);
  });

  it("an engine's webhook reaches every replica through the root and the coordinator", async () => {
    const r = await ref(WEBHOOK);
    const iso = isolate("iso-webhook");
    const held = edgePool(iso, r);
    await syncOnce(held, env);
    const eligible = () =>
      held.replica.loads(Date.now()).find((o) => o.id === "edge-w-2")?.load.eligible;
    expect(eligible()).toBe(true);
    const down = engineBatch("edge-w-2", [{ type: "health", status: "down" }]);
    const res = await postSigned(await signBatch(down));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ accepted: 1, models: [WEBHOOK] });
    // The coordinator asks the root at most every rootIntervalMs, after a sync.
    await waitFor(
      async () => {
        await syncOnce(held, env);
        await new Promise((resolve) => setTimeout(resolve, 60));
        return eligible() === false;
      },
      5000,
      "the origin's health to reach the replica",
    );
    for (let t = 0; t < 8; t++) {
      expect((await route(iso, r, `after-down-${t}`, 0)).decision.origin).not.toBe("edge-w-2");
    }
    await settle(iso);
  });
});

describe("two coordinators under one root", () => {
  it("each colo group's isolates sync with their own coordinator; load crosses through the root", async () => {
    const r = await ref(SHARDED);
    const america = isolate("iso-nam");
    const europe = isolate("iso-eur");
    const cf = { nam: { continent: "NA", longitude: -77 }, eur: { continent: "EU", longitude: 2 } };
    const at = (iso: Isolate, where: keyof typeof cf, topic: string) =>
      routeAtEdge(env, iso.ctx, r, request(SHARDED, topic, 0), {
        registry: iso.registry,
        cf: cf[where],
      });
    const sent = [];
    for (let k = 0; k < 4; k++) sent.push(await at(america, "nam", `shard-${k}`));
    await at(europe, "eur", "shard-eu");
    const nam = america.registry.peek(SHARDED) as EdgePool;
    const eur = europe.registry.peek(SHARDED) as EdgePool;
    expect([nam.group, eur.group]).toEqual([0, 1]);
    // The coordinators exchange with the root at most every rootIntervalMs, after a sync.
    const seen = () => eur.replica.loads(Date.now()).reduce((n, o) => n + o.load.outstanding, 0);
    await waitFor(
      async () => {
        await Promise.all([syncOnce(nam, env), syncOnce(eur, env)]);
        await new Promise((resolve) => setTimeout(resolve, 60));
        return seen() === 5;
      },
      5000,
      "America's requests in flight to reach Europe's replica",
    );
    // Each coordinator applied its own group's records only.
    const state = (g: number) => env.COORDINATOR.getByName(`${SHARDED}#${g}`).state();
    const [zero, one] = await Promise.all([state(0), state(1)]);
    expect(zero?.counters.recordsApplied).toBe(4);
    expect(one?.counters.recordsApplied).toBe(1);
    // /metrics shows each coordinator's decisions under its own label: together, the pool's.
    const scrape = await (await admin("/metrics")).text();
    const routed = (g: number) =>
      scrape
        .split("\n")
        .filter((line) =>
          line.startsWith(`llm_router_routed_total{model="${SHARDED}",coordinator="${g}",`),
        )
        .reduce((n, line) => n + Number(line.split(" ").at(-1)), 0);
    expect([routed(0), routed(1)]).toEqual([4, 1]);
    for (const { decision, ledger } of sent) {
      await ledger.complete(decision.ticket as string, okReport(decision));
    }
    await Promise.all([settle(america), settle(europe)]);
  });
});

describe("edge pools through the Worker", () => {
  it("answers with no pool object, logs the edge decision and shows the coordinator", async () => {
    for (const turns of [0, 1]) {
      const res = await chat(HTTP, conversation("worker-edge", turns));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-router-origin")).toMatch(/^edge-h-/);
      await res.text();
    }
    await waitFor(
      async () => ((await coordinatorState(HTTP)).counters.recordsApplied ?? 0) >= 2,
      5000,
      "the Worker's records to reach the coordinator",
    );
    expect(await env.ROUTER.getByName(HTTP).state()).toBeNull();
    const state = (await (await admin(`/admin/state?model=${HTTP}`)).json()) as {
      object: CoordinatorState | null;
      coordinators: (CoordinatorState | null)[];
      replica: { counters: { answers: number } } | null;
    };
    expect(state.coordinators).toHaveLength(1);
    expect(state.object?.metrics).toBeDefined();
    expect(state.replica?.counters.answers).toBeGreaterThan(0);
  });

  it("/admin/state shows the distinct isolates each coordinator heard from", async () => {
    const r = await ref(CENSUS);
    const isolates = ["census-1", "census-2", "census-3"].map(isolate);
    for (const iso of isolates) await syncOnce(edgePool(iso, r), env);
    // Syncing again is the same isolate, not another.
    await syncOnce(edgePool(isolates[0] as Isolate, r), env);
    const state = (await (await admin(`/admin/state?model=${CENSUS}`)).json()) as {
      coordinators: CoordinatorState[];
    };
    expect(state.coordinators[0]?.isolates).toMatchObject({ sinceStart: 3, lastHour: 3 });
    expect(state.coordinators[0]?.isolates.standardError).toBeCloseTo(0.0325, 4);
  });
});
