import { beforeAll, describe, expect, it } from "vitest";
import {
  chat,
  hits,
  objectState,
  origin,
  outstanding,
  pool,
  putSettings,
  refusedBase,
  waitFor,
} from "../test/helpers.ts";

// Round-robin sends a fresh pool's first request to its first origin, so each pool below
// starts with the origin under test and fails over to the next in settings order.
const RR = { policy: { type: "round-robin" as const } };
const fast = { retry: { backoffMs: 10 } };

beforeAll(async () => {
  await putSettings({
    pools: {
      refused: pool([{ id: "fo-refused", url: `${refusedBase}/x` }, origin("fo-r-ok")], {
        ...RR,
        ...fast,
      }),
      status500: pool([origin("fo-500", "fail500"), origin("fo-5-ok")], { ...RR, ...fast }),
      status429: pool([origin("fo-429", "fail429"), origin("fo-4-ok")], { ...RR, ...fast }),
      hang: pool([origin("fo-hang", "hang"), origin("fo-h-ok")], {
        ...RR,
        ...fast,
        firstByteTimeoutMs: 300,
      }),
      midstream: pool([origin("fo-mid", "midstream"), origin("fo-m-ok")], { ...RR, ...fast }),
      busy: pool([origin("fo-busy-1", "fail429"), origin("fo-busy-2", "fail429")], {
        ...RR,
        ...fast,
      }),
      broken: pool([origin("fo-broken", "fail500"), { id: "fo-gone", url: `${refusedBase}/y` }], {
        ...RR,
        ...fast,
      }),
      budget: pool([origin("fo-b1", "fail500"), origin("fo-b2", "fail500"), origin("fo-b3")], {
        ...RR,
        ...fast,
        retry: { maxAttempts: 2, backoffMs: 10 },
      }),
      circuit: pool([origin("fo-c", "fail500")], {
        ...RR,
        ...fast,
        circuit: { failureThreshold: 1, cooldownMs: 60_000 },
      }),
    },
  });
});

async function failures(model: string) {
  await waitFor(async () => (await outstanding(model)) === 0, 5000, `${model} to settle`);
  return (await objectState(model))?.router.failures ?? {};
}

const hello = [{ role: "user", content: "hello" }];

describe("failover before the first byte", () => {
  it.each([
    ["refused", "fo-r-ok", "connect"],
    ["status500", "fo-5-ok", "status-5xx"],
    ["status429", "fo-4-ok", "status-429"],
  ] as const)("%s: served by the next origin", async (model, next, kind) => {
    const res = await chat(model, hello, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe(next);
    expect(res.headers.get("x-router-attempts")).toBe("2");
    await res.text();
    expect((await failures(model))[kind]).toBe(1);
    expect(await hits(next)).toBeGreaterThanOrEqual(1);
  });

  it("an origin hanging past firstByteTimeoutMs: served by the next", async () => {
    const started = Date.now();
    const res = await chat("hang", hello);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fo-h-ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await res.text();
    expect((await failures("hang")).timeout).toBe(1);
  });

  it("a failure mid-stream is passed on as the stream's last event, not retried", async () => {
    const res = await chat("midstream", hello, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fo-mid");
    expect(await res.text()).toContain('"code":"origin_stream_error"');
    expect((await failures("midstream")).stream).toBe(1);
    expect(await hits("fo-m-ok")).toBe(0);
  });

  it("all origins busy (429): 503 with the origins' Retry-After", async () => {
    const res = await chat("busy", hello);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("7");
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error.code).toBe("origins_overloaded");
    expect(body.error.message).toContain("fo-busy-1: status-429");
    expect(body.error.message).not.toContain("127.0.0.1");
  });

  it("all origins failing: 502 in the OpenAI error shape", async () => {
    const res = await chat("broken", hello);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; type: string } };
    expect(body.error).toMatchObject({ code: "origins_failed", type: "server_error" });
    expect(await failures("broken")).toMatchObject({ "status-5xx": 1, connect: 1 });
  });

  it("stays within the retry budget", async () => {
    const res = await chat("budget", hello);
    expect(res.status).toBe(502);
    expect(await hits("fo-b1")).toBe(1);
    expect(await hits("fo-b2")).toBe(1);
    expect(await hits("fo-b3")).toBe(0);
  });

  it("an open circuit leaves no origin: 503 with Retry-After, the origin not called", async () => {
    expect((await chat("circuit", hello)).status).toBe(502);
    const res = await chat("circuit", hello);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("60");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      "no_eligible_origin",
    );
    expect(await hits("fo-c")).toBe(1);
  });
});
