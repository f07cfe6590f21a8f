import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BatchLedger } from "../../src/core/batch-ledger.ts";
import { Delivery } from "./deliver.ts";

interface Received {
  body: string;
  signature: string;
}

/** A router stand-in that verifies signatures and answers with the given statuses in turn. */
async function router(
  statuses: number[],
): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ body, signature: String(req.headers["x-router-signature"]) });
      res.statusCode = statuses.shift() ?? 200;
      res.end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

/**
 * A router stand-in that orders batches as the router does (`BatchLedger` on its clock `now`):
 * 200 applied or duplicate, 409 stale (naming the last applied `at`), 400 made too far ahead.
 * Records each answer's status.
 */
function ledgerRouter(now: () => number) {
  const ledger = new BatchLedger();
  const answers: number[] = [];
  const fetch = async (_url: unknown, init?: RequestInit) => {
    const { origin, id, at } = JSON.parse(String(init?.body));
    const verdict = ledger.check(origin, id, at, now());
    if (verdict === "apply") ledger.record(origin, id, at, now());
    const status = { apply: 200, duplicate: 200, stale: 409, ahead: 400 }[verdict];
    answers.push(status);
    const details = { lastAppliedAt: ledger.lastAt(origin) };
    return new Response(status === 409 ? JSON.stringify({ error: { details } }) : "{}", { status });
  };
  return { fetch: fetch as typeof globalThis.fetch, answers };
}

let server: Server | undefined;
afterEach(() => server?.close());

const options = (url: string) => ({
  router: url,
  origin: "gpu-a",
  secret: "s3cret",
  attempts: 3,
  backoffMs: 1,
  timeoutMs: 2000,
  now: () => 1_700_000_000_000,
});

describe("Delivery", () => {
  it("signs t.body with HMAC-SHA256 as the router verifies it", async () => {
    const r = await router([200]);
    server = r.server;
    const result = await new Delivery(options(r.url)).send([{ type: "cache-reset" }]);
    expect(result).toEqual({ ok: true });
    const [{ body, signature }] = r.received as [Received];
    expect(JSON.parse(body)).toEqual({
      origin: "gpu-a",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      at: 1_700_000_000_000,
      events: [{ type: "cache-reset" }],
    });
    const mac = createHmac("sha256", "s3cret").update(`1700000000.${body}`).digest("hex");
    expect(signature).toBe(`t=1700000000,v1=${mac}`);
  });

  it("retries 5xx with backoff, then succeeds", async () => {
    const r = await router([503, 500, 200]);
    server = r.server;
    expect(
      await new Delivery(options(r.url)).send([
        { type: "load", running: 1, waiting: 0, kvUsage: 0 },
      ]),
    ).toEqual({ ok: true });
    expect(r.received).toHaveLength(3);
    // A retry is the same batch, so the router applies it at most once.
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
  });

  it("each batch has a new id and a later at, even when the clock stands still", async () => {
    const r = await router([200, 200, 200]);
    server = r.server;
    const d = new Delivery(options(r.url));
    for (let i = 0; i < 3; i++) await d.send([{ type: "cache-reset" }]);
    const batches = r.received.map((x) => JSON.parse(x.body) as { id: string; at: number });
    expect(new Set(batches.map((b) => b.id)).size).toBe(3);
    expect(batches.map((b) => b.at)).toEqual([
      1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_002,
    ]);
  });

  it("a 409 stale_batch is not retried; its state-changing events go out in a newer batch", async () => {
    const r = await router([409, 200]);
    server = r.server;
    const d = new Delivery(options(r.url));
    expect(await d.send([{ type: "health", status: "up" }])).toMatchObject({ status: 409 });
    expect(r.received).toHaveLength(1);
    await d.send([]);
    const [first, second] = r.received.map((x) => JSON.parse(x.body));
    expect(second.events).toEqual([{ type: "health", status: "up" }]);
    expect(second.at).toBeGreaterThan(first.at);
    expect(second.id).not.toBe(first.id);
  });

  it("does not retry a 401, and keeps state-changing events (not load) for next time", async () => {
    const r = await router([401, 200]);
    server = r.server;
    const d = new Delivery(options(r.url));
    const first = await d.send([
      { type: "health", status: "down" },
      { type: "load", running: 1, waiting: 0, kvUsage: 0 },
    ]);
    expect(first).toMatchObject({ ok: false, status: 401 });
    expect(r.received).toHaveLength(1);
    expect(d.pending).toEqual([{ type: "health", status: "down" }]);
    await d.send([{ type: "load", running: 2, waiting: 0, kvUsage: 0 }]);
    expect(JSON.parse(r.received[1]?.body ?? "").events).toEqual([
      { type: "health", status: "down" },
      { type: "load", running: 2, waiting: 0, kvUsage: 0 },
    ]);
    expect(d.pending).toEqual([]);
  });

  it("a clock that jumps back: every batch is still applied, in order", async () => {
    let clock = 1_700_000_000_000;
    const r = ledgerRouter(() => 1_700_000_000_000 + r.answers.length * 1000);
    const d = new Delivery({ ...options("http://router"), fetch: r.fetch, now: () => clock });
    for (let i = 0; i < 10; i++) {
      if (i === 5) clock -= 60_000;
      await d.send([{ type: "load", running: i, waiting: 0, kvUsage: 0 }]);
      clock += 1000;
    }
    expect(r.answers).toEqual(Array(10).fill(200));
  });

  it("a clock that ran 45 s fast and is set back: accepted again at once (issue 24)", async () => {
    // The router refuses the batches made ahead (400); they must not hold this reporter's `at`
    // ahead of its clock, where the router would refuse it until the clock caught up.
    let routerNow = 1_700_000_000_000;
    let skew = 45_000;
    const r = ledgerRouter(() => routerNow);
    const d = new Delivery({
      ...options("http://router"),
      fetch: r.fetch,
      now: () => routerNow + skew,
    });
    for (let i = 0; i < 20; i++) {
      if (i === 3) skew = 0;
      await d.send([{ type: "load", running: i, waiting: 0, kvUsage: 0 }]);
      routerNow += 1000;
    }
    expect(r.answers).toEqual([...Array(3).fill(400), ...Array(17).fill(200)]);
  });

  it("a reporter restarted with its clock set back 45 s: one batch refused, then applied (issue 24)", async () => {
    let routerNow = 1_700_000_000_000;
    const r = ledgerRouter(() => routerNow);
    const load = [{ type: "load" as const, running: 1, waiting: 0, kvUsage: 0 }];
    const before = new Delivery({
      ...options("http://router"),
      fetch: r.fetch,
      now: () => routerNow,
    });
    for (let i = 0; i < 3; i++, routerNow += 1000) await before.send(load);
    const after = new Delivery({
      ...options("http://router"),
      fetch: r.fetch,
      now: () => routerNow - 45_000,
    });
    for (let i = 0; i < 5; i++, routerNow += 1000) await after.send(load);
    expect(r.answers).toEqual([200, 200, 200, 409, 200, 200, 200, 200]);
  });

  it("keeps one statement of each fact for next time, however many batches failed", async () => {
    // The reporter states health in every batch: carried whole, 100 failed ticks of `down`
    // would pass the 100 events a batch may hold, and the router would refuse it forever.
    const unreachable = (async () => {
      throw new Error("connection refused");
    }) as typeof fetch;
    const d = new Delivery({ ...options("http://router"), attempts: 1, fetch: unreachable });
    await d.send([{ type: "cache-reset" }, { type: "health", status: "up" }]);
    for (let i = 0; i < 150; i++) await d.send([{ type: "health", status: "down" }]);
    await d.send([{ type: "capacity", kvCapacityTokens: 64 }]);
    expect(d.pending).toEqual([
      { type: "cache-reset" },
      { type: "capacity", kvCapacityTokens: 64 },
      { type: "health", status: "down" },
    ]);
  });

  it("survives a router that refuses connections", async () => {
    const d = new Delivery({ ...options("http://127.0.0.1:9"), attempts: 2 });
    const result = await d.send([{ type: "cache-reset" }]);
    expect(result).toMatchObject({ ok: false, status: null });
    expect(d.pending).toEqual([{ type: "cache-reset" }]);
  });
});
