/**
 * Fault injection against real local origins (see origins.node.ts): an origin that hangs before
 * its headers, stalls after them or mid-body, dies mid-stream, redirects, or loses its client.
 * Each test checks what the client sees and that the pool's object counts nothing outstanding
 * afterwards (load and leases back to zero), and where the router must close the origin's
 * connection, that the origin saw it closed.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RequestLogLine } from "../request-record/request-record.ts";
import { FORWARDING_HEADERS, REDIRECT_LOCATION, STEERING_HEADERS } from "../test/fixture.ts";
import {
  aborted,
  chat,
  hits,
  objectState,
  origin,
  outstanding,
  pool,
  putSettings,
  releaseHeld,
  waitFor,
} from "../test/helpers.ts";

// Round-robin sends a fresh pool's first request to its first origin: the one under test.
const RR = { policy: { type: "round-robin" as const }, retry: { backoffMs: 10 } };
const IDLE_MS = 300;

beforeAll(async () => {
  await putSettings({
    pools: {
      "stall-headers": pool([origin("fa-stall", "stall"), origin("fa-stall-ok")], {
        ...RR,
        firstByteTimeoutMs: 300,
      }),
      "stall-sse": pool([origin("fa-idle", "stall-midstream")], {
        ...RR,
        streamIdleTimeoutMs: IDLE_MS,
      }),
      "stall-json": pool([origin("fa-idle-json", "stall-midstream")], {
        ...RR,
        streamIdleTimeoutMs: IDLE_MS,
      }),
      "hang-headers": pool([origin("fa-hang", "hang"), origin("fa-hang-ok")], {
        ...RR,
        firstByteTimeoutMs: 300,
      }),
      "hang-all": pool([origin("fa-hang-1", "hang"), origin("fa-hang-2", "hang")], {
        ...RR,
        firstByteTimeoutMs: 300,
      }),
      "die-sse": pool([origin("fa-die", "midstream"), origin("fa-die-next")], RR),
      "die-partial": pool([origin("fa-cut", "midstream-partial")], RR),
      redirect: pool([origin("fa-3xx", "redirect"), origin("fa-3xx-ok")], RR),
      "redirect-all": pool([origin("fa-3xx-1", "redirect"), origin("fa-3xx-2", "redirect")], RR),
      "client-abort": pool([origin("fa-hold", "hold")], RR),
      headers: pool([origin("fa-headers")], RR),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

const hello = [{ role: "user", content: "hello" }];

async function settled(model: string) {
  await waitFor(async () => (await outstanding(model)) === 0, 5000, `${model} load to return to 0`);
  return (await objectState(model))?.router;
}

interface SseError {
  error: { message: string; type: string; code: string; param: null };
}

/** The SSE events of a body, split on blank lines; `[DONE]` kept as a string. */
function events(text: string): (SseError | Record<string, unknown> | string)[] {
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => {
      const data = event.slice(6);
      return data === "[DONE]" ? data : JSON.parse(data);
    });
}

/** The request log lines written while `run` goes, once one is there. */
async function logged(run: () => Promise<void>): Promise<RequestLogLine> {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.includes('"msg":"llm_request"')) lines.push(line);
  });
  await run();
  await waitFor(() => lines.length > 0, 5000, "the request log line");
  return JSON.parse(lines[0] as string) as RequestLogLine;
}

describe("an origin that sends its headers and then stalls", () => {
  it("before any body byte: fails over within firstByteTimeoutMs, the stalled connection closed", async () => {
    const started = Date.now();
    const res = await chat("stall-headers", hello, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fa-stall-ok");
    expect(res.headers.get("x-router-attempts")).toBe("2");
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(events(await res.text()).at(-1)).toBe("[DONE]");
    const router = await settled("stall-headers");
    expect(router?.failures).toEqual({ timeout: 1 });
    await waitFor(async () => (await aborted("fa-stall")) === 1, 2000, "fa-stall closed");
  });

  it("mid-stream: ended after streamIdleTimeoutMs with an OpenAI error event, reported as stream_error", async () => {
    let res = new Response();
    let body = "";
    const started = Date.now();
    const line = await logged(async () => {
      res = await chat("stall-sse", hello, { stream: true });
      body = await res.text();
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fa-idle");
    const all = events(body);
    expect(all).toHaveLength(3);
    expect(all[0]).toMatchObject({ id: "fa-idle" });
    expect(all[1]).toEqual({
      error: {
        message: `the origin sent nothing for ${IDLE_MS} ms; the response was ended`,
        type: "server_error",
        code: "stream_idle_timeout",
        param: null,
      },
    });
    expect(all[2]).toBe("[DONE]");
    expect(line).toMatchObject({
      model: "stall-sse",
      origin: "fa-idle",
      outcome: "stream_error",
      error: "stream_idle_timeout",
    });
    const router = await settled("stall-sse");
    expect(router?.failures).toEqual({ stream: 1 });
    expect(router?.origins[0]?.consecutiveFailures).toBe(1);
    await waitFor(async () => (await aborted("fa-idle")) === 1, 2000, "fa-idle closed");
  });

  it("mid-body of a JSON answer: the response is aborted (no event can follow JSON)", async () => {
    const res = await chat("stall-json", hello);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    const router = await settled("stall-json");
    expect(router?.failures).toEqual({ stream: 1 });
    await waitFor(async () => (await aborted("fa-idle-json")) === 1, 2000, "fa-idle-json closed");
  });
});

describe("an origin that hangs before its headers", () => {
  it("fails over after firstByteTimeoutMs, the hung connection closed", async () => {
    const res = await chat("hang-headers", hello, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fa-hang-ok");
    await res.text();
    expect((await settled("hang-headers"))?.failures).toEqual({ timeout: 1 });
    await waitFor(async () => (await aborted("fa-hang")) === 1, 2000, "fa-hang closed");
  });

  it("every origin hanging: 502 in the OpenAI shape", async () => {
    const res = await chat("hang-all", hello);
    expect(res.status).toBe(502);
    expect(((await res.json()) as SseError).error.code).toBe("origins_failed");
    expect((await settled("hang-all"))?.failures).toEqual({ timeout: 2 });
  });
});

describe("an origin that dies mid-stream", () => {
  it("at an event boundary: the SSE stream ends with an OpenAI error event, not retried", async () => {
    const res = await chat("die-sse", hello, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fa-die");
    const all = events(await res.text());
    expect(all[0]).toMatchObject({ id: "fa-die" });
    expect(all.at(-2)).toMatchObject({
      error: { type: "server_error", code: "origin_stream_error", param: null },
    });
    expect(all.at(-1)).toBe("[DONE]");
    expect((await settled("die-sse"))?.failures).toEqual({ stream: 1 });
    expect(await hits("fa-die-next")).toBe(0);
  });

  it("inside an event: a blank line ends the half event, then the error event", async () => {
    const res = await chat("die-partial", hello, { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(
      /\n\ndata: \{"id":"cut\n\ndata: \{"error":\{.*"code":"origin_stream_error".*\}\}\n\ndata: \[DONE\]\n\n$/,
    );
    expect((await settled("die-partial"))?.failures).toEqual({ stream: 1 });
  });
});

describe("an origin that redirects", () => {
  it("an origin's 3xx is an origin failure: fails over, Location never reaches the client", async () => {
    const res = await chat("redirect", hello, { stream: true });

    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("fa-3xx-ok");
    expect(res.headers.get("location")).toBeNull();
    await res.text();
    expect((await settled("redirect"))?.failures).toEqual({ "status-3xx": 1 });
  });

  it("every origin redirecting: 502, and the internal address appears nowhere", async () => {
    const res = await chat("redirect-all", hello);
    expect(res.status).toBe(502);
    expect(res.headers.get("location")).toBeNull();
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("origins_failed");
    expect(text).not.toContain(new URL(REDIRECT_LOCATION).hostname);
    expect((await settled("redirect-all"))?.failures).toEqual({ "status-3xx": 2 });
  });
});

describe("a client that goes away", () => {
  it("mid-stream: load returns to zero, the origin's connection is closed, no origin blamed", async () => {
    const res = await chat("client-abort", hello, { stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    expect(await outstanding("client-abort")).toBe(1);
    await reader.cancel();
    const router = await settled("client-abort");
    expect(router?.failures).toEqual({});
    await waitFor(async () => (await aborted("fa-hold")) === 1, 2000, "fa-hold closed");
    await releaseHeld("fa-hold");
  });
});

describe("headers toward origins", () => {
  it("client headers that steer P/D routing (SSRF into the GPU network) or carry a key never reach the origin", async () => {
    const headers = Object.fromEntries(STEERING_HEADERS.map((name) => [name, "10.0.0.66:8000"]));
    const res = await chat("headers", hello, { headers: { ...headers, "x-custom": "kept" } });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.headers.get("x-test-received") ?? "{}");
    expect(seen["x-custom"]).toBe("kept");
    for (const name of STEERING_HEADERS) expect(seen[name], name).toBeUndefined();
    await res.text();
    await settled("headers");
  });

  it("the client's Forwarded, X-Forwarded-* and X-Original-URL passed unchanged: the origin gets the router's (issue 24)", async () => {
    const claims = Object.fromEntries(FORWARDING_HEADERS.map((name) => [name, "6.6.6.6"]));
    const res = await chat("headers", hello, {
      headers: { ...claims, "x-original-url": "/admin", "cf-connecting-ip": "203.0.113.9" },
    });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.headers.get("x-test-received") ?? "{}");
    expect(seen).toMatchObject({
      "x-forwarded-for": "203.0.113.9",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "router.test",
    });
    for (const name of ["forwarded", "x-forwarded-port", "x-original-url", "x-real-ip"]) {
      expect(seen[name], name).toBeUndefined();
    }
    await res.text();
    await settled("headers");
  });

  it("Expect reached the origin, which answered 417 to the client: dropped, the request routes", async () => {
    const res = await chat("headers", hello, { headers: { expect: "x" } });
    expect(res.status).toBe(200);
    await res.text();
    await settled("headers");
  });

  it("client headers past the origin's limit came back as a 431 or 502 from it: the router answers 431 itself", async () => {
    const before = await hits("fa-headers");
    const big = "x".repeat(9000);
    const res = await chat("headers", hello, { headers: { "x-one": big, "x-two": big } });
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect({ status: res.status, code: body.error.code, type: body.error.type }).toEqual({
      status: 431,
      code: "request_header_fields_too_large",
      type: "invalid_request_error",
    });
    expect(await hits("fa-headers")).toBe(before);
    expect(await outstanding("headers")).toBe(0);
  });
});
