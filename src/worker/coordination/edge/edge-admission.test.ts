/**
 * Admission in edge mode, in workerd: the isolate's replica holds, routes late and sheds, as
 * the pool's object does in object mode (objects/admission-object.test.ts). Several
 * `ReplicaRegistry`s stand for several isolates; the HTTP tests go through the Worker's entry
 * point, whose module-scope registry is this isolate's.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AdmissionStats } from "../../../core/admission/admission.ts";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import type { RouteDecision } from "../../../core/router/router-types.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import type { RequestReport } from "../../request-record/request-report.ts";
import { ref } from "../../test/edge-isolates.ts";
import {
  admin,
  chat,
  conversation,
  drain,
  hits,
  origin,
  originBase,
  pool,
  putSettings,
  waitFor,
} from "../../test/helpers.ts";
import type { Routed } from "../shared/routed.ts";
import { ReplicaRegistry } from "./replica-registry.ts";
import { routeAtEdge } from "./route-at-edge.ts";
import { syncOnce } from "./sync-loop.ts";

const HELD = "edge-adm-held";
const CROSS = "edge-adm-cross";
const LEAVE = "edge-adm-leave";
const ROUTED_THEN_LEFT = "edge-adm-routed-left";
const HTTP_HELD = "edge-adm-http";
const HTTP_SHED = "edge-adm-shed";

/**
 * An edge pool of one origin that prefills 1 token/s: once it has a request in flight,
 * everything waits (maxWaitMs 0). Syncs only when asked (warmMs 0), and soon (flushMs 10).
 */
const slow = (id: string, maxQueued: number, behaviour = "ok") =>
  pool([origin(id, behaviour)], {
    coordination: "edge",
    edge: { flushMs: 10, warmMs: 0 },
    prefillTokensPerSecond: 1,
    admission: { maxWaitMs: 0, queueTimeoutMs: 30_000, maxQueued },
  });

beforeAll(async () => {
  await putSettings({
    pools: {
      [HELD]: slow("edge-adm-h", 5),
      [CROSS]: slow("edge-adm-c", 5),
      [LEAVE]: slow("edge-adm-l", 1),
      [ROUTED_THEN_LEFT]: slow("edge-adm-rl", 5),
      [HTTP_HELD]: slow("edge-adm-hh", 5, "hold"),
      [HTTP_SHED]: slow("edge-adm-hs", 0, "hold"),
    },
  });
});

/** One isolate routing `r`'s requests, each on `topic`, its client's signal `signal`. */
function isolate(name: string, r: PoolRef) {
  const registry = new ReplicaRegistry(name);
  const ctx = createExecutionContext();
  const route = (topic: string, signal?: AbortSignal): Promise<Routed> => {
    const key = promptKey({ model: r.model, messages: conversation(topic, 1) });
    const request = { chunkHashes: key.chunkHashes, promptTokens: key.promptTokens };
    return routeAtEdge(env, ctx, r, request, { registry, waiter: { signal } });
  };
  return { registry, route, pool: () => registry.get(r, 0) };
}

function ok(decision: RouteDecision): RequestReport {
  return {
    origin: decision.origin,
    outcome: "ok",
    failures: [],
    matchedTokens: decision.matchedTokens,
    objectMs: null,
    fallback: null,
  };
}

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol("pending");
  const timer = new Promise((resolve) => setTimeout(() => resolve(marker), ms));
  return (await Promise.race([promise.catch(() => null), timer])) === marker;
}

describe("admission in edge mode (the isolate's replica)", () => {
  it("holds a request while the origin is busy and routes it when a completion frees room", async () => {
    const r = await ref(HELD);
    const iso = isolate("adm-held", r);
    const first = await iso.route("one");
    const held = iso.route("two");
    expect(await pendingAfter(held, 50)).toBe(true);
    expect(iso.pool().admission.stats(Date.now()).waiting.interactive).toBe(1);
    await first.ledger.complete(first.decision.ticket as string, ok(first.decision));
    const second = await held;
    expect(second.decision.origin).toBe("edge-adm-h");
    expect(second.coordination).toBe("edge");
    expect(iso.pool().admission.stats(Date.now()).admitted).toEqual({ atOnce: 1, afterWait: 1 });
  });

  it("holds a request while another isolate's request fills the pool, and routes it once that one ends", async () => {
    const r = await ref(CROSS);
    const a = isolate("adm-cross-a", r);
    const b = isolate("adm-cross-b", r);
    const first = await a.route("one");
    await syncOnce(a.pool(), env);
    await syncOnce(b.pool(), env);
    // b learned of a's request through the coordinator: its own request waits.
    const held = b.route("two");
    expect(await pendingAfter(held, 50)).toBe(true);
    await first.ledger.complete(first.decision.ticket as string, ok(first.decision));
    await syncOnce(a.pool(), env);
    // b, waiting, keeps syncing; it hears the end and routes its request.
    const second = await held;
    expect(second.decision.origin).toBe("edge-adm-c");
  });

  it("a waiting client that leaves frees its place for the next", async () => {
    const r = await ref(LEAVE);
    const iso = isolate("adm-leave", r);
    await iso.route("one");
    const client = new AbortController();
    const leaving = iso.route("two", client.signal);
    expect(await pendingAfter(leaving, 50)).toBe(true);
    // The room (maxQueued 1) is full: a newcomer is shed at once.
    await expect(iso.route("three")).rejects.toMatchObject({ status: 503 });
    client.abort();
    const error = await leaving.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "client_left" });
    expect(iso.pool().admission.stats(Date.now())).toMatchObject({
      left: 1,
      waiting: { interactive: 0 },
    });
    // Its place is free: the next one waits rather than being shed.
    const next = iso.route("four");
    expect(await pendingAfter(next, 50)).toBe(true);
    expect(iso.pool().admission.waiting).toBe(1);
    // Let it go: admission settings gone, everyone waiting is routed.
    iso.pool().admission.configure(undefined, Date.now());
    expect((await next).decision.origin).toBe("edge-adm-l");
  });

  it("a held client that leaves after another request's end routed it, before it looked, is not sent and gives its lease back", async () => {
    const r = await ref(ROUTED_THEN_LEFT);
    const iso = isolate("adm-routed-left", r);
    const first = await iso.route("one");
    const client = new AbortController();
    const leaving = iso.route("two", client.signal);
    expect(await pendingAfter(leaving, 50)).toBe(true);
    // The end pumps admission, which routes the held request; its client leaves before the
    // request wakes to look.
    await first.ledger.complete(first.decision.ticket as string, ok(first.decision));
    client.abort();
    await expect(leaving).rejects.toMatchObject({ code: "client_left" });
    expect(iso.pool().replica.router.outstanding).toBe(0);
  });
});

describe("admission in edge mode through the Worker's entry point", () => {
  it("a request held while the origin serves another is sent when that one ends", async () => {
    const first = await chat(HTTP_HELD, conversation("one", 1), { stream: true });
    expect(first.status).toBe(200);
    const second = chat(HTTP_HELD, conversation("two", 1), { stream: true });
    expect(await pendingAfter(second, 100)).toBe(true);
    await fetch(`${originBase}/_release/edge-adm-hh`);
    await drain(first);
    const res = await second;
    expect(res.status).toBe(200);
    await waitFor(async () => {
      await fetch(`${originBase}/_release/edge-adm-hh`);
      return !(await pendingAfter(drain(res), 50));
    });
  });

  it("a shed request gets 503 in OpenAI's shape with Retry-After, and never reaches an origin", async () => {
    const first = await chat(HTTP_SHED, conversation("one", 1), { stream: true });
    expect(first.status).toBe(200);
    const res = await chat(HTTP_SHED, conversation("two", 1));
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: "server_error", code: "overloaded" });
    expect(body.error.message).toContain("queue-full");
    expect(await hits("edge-adm-hs")).toBe(1);
    // Operators see it in this isolate's replica.
    const state = (await (await admin(`/admin/state?model=${HTTP_SHED}`)).json()) as {
      replica: { admission: AdmissionStats } | null;
    };
    expect(state.replica?.admission.shed.interactive["queue-full"]).toBe(1);
    await fetch(`${originBase}/_release/edge-adm-hs`);
    await drain(first);
  });
});
