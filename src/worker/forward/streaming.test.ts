import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { CACHED_TOKENS } from "../test/fixture.ts";
import {
  call,
  chat,
  objectState,
  origin,
  originBase,
  outstanding,
  pool,
  putSettings,
  releaseHeld,
  waitFor,
} from "../test/helpers.ts";

const MODEL = "streaming-model";
const HOLD_MODEL = "streaming-hold-model";

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool([origin("st-a", "ok", { apiKeySecret: "TEST_ORIGIN_KEY" })]),
      [HOLD_MODEL]: pool([origin("st-hold", "hold")]),
    },
  });
});

/** The same request sent straight to the origin, for a byte-for-byte comparison. */
async function direct(path: string, body: string): Promise<Uint8Array> {
  const res = await fetch(`${originBase}/ok/st-a${path}`, { method: "POST", body });
  return new Uint8Array(await res.arrayBuffer());
}

async function bytesOf(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

describe("streaming", () => {
  it("the client receives exactly the origin's SSE bytes, with the router's headers", async () => {
    const body = JSON.stringify({
      model: MODEL,
      stream: true,
      messages: [{ role: "user", content: "héllo" }],
    });
    const res = await call("/v1/chat/completions", { method: "POST", body });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("x-router-origin")).toBe("st-a");
    expect(res.headers.get("x-router-policy")).toBe("cost");
    expect(res.headers.get("x-router-reason")).toBeTruthy();
    expect(res.headers.get("x-router-matched-tokens")).toBe("0");
    expect(await bytesOf(res)).toEqual(await direct("/v1/chat/completions", body));
  });

  it("the client receives exactly the origin's JSON bytes on /v1/completions", async () => {
    const body = JSON.stringify({ model: MODEL, prompt: "Once upon a time" });
    const res = await call("/v1/completions", { method: "POST", body });
    expect(res.status).toBe(200);
    expect(await bytesOf(res)).toEqual(await direct("/v1/completions", body));
  });

  it("forwards the original bytes with the origin's key, never the client's credentials", async () => {
    // Odd spacing and key order: a re-serialised body would hash differently.
    const body = `{ "messages" : [ {"content":"hi","role":"user"} ],   "model":"${MODEL}" }`;
    const res = await call("/v1/chat/completions", {
      method: "POST",
      body,
      headers: {
        authorization: "Bearer client-key",
        cookie: "session=secret",
        "x-router-session": "s1",
        "x-custom": "kept",
        connection: "x-hop",
        "x-hop": "hop-by-hop, listed in Connection",
      },
    });
    expect(res.status).toBe(200);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(res.headers.get("x-test-body-sha256")).toBe(hex);
    const seen = JSON.parse(res.headers.get("x-test-received") ?? "{}");
    expect(seen.authorization).toBe(
      `Bearer ${(env as unknown as Record<string, string>).TEST_ORIGIN_KEY}`,
    );
    expect(seen.cookie).toBeUndefined();
    expect(seen["x-router-session"]).toBeUndefined();
    expect(seen["x-custom"]).toBe("kept");
    expect(seen["x-hop"]).toBeUndefined();
    expect(seen["x-request-id"]).toBe(res.headers.get("x-request-id"));
    expect(res.headers.get("set-cookie")).toBeNull();
    await res.arrayBuffer();
  });

  it("complete runs after the stream ends and reports the engine's cached tokens", async () => {
    const before = (await objectState(MODEL))?.router.accuracy.reports ?? 0;
    const res = await chat(MODEL, [{ role: "user", content: "count me" }], { stream: true });
    await res.arrayBuffer();
    await waitFor(async () => (await objectState(MODEL))?.router.accuracy.reports === before + 1);
    const state = await objectState(MODEL);
    expect(state?.router.accuracy.cachedTokens).toBe((before + 1) * CACHED_TOKENS);
    expect(await outstanding(MODEL)).toBe(0);
  });

  it("complete waits for the stream: load stays counted while it is open", async () => {
    const res = await chat(HOLD_MODEL, [{ role: "user", content: "hold on" }], { stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    // Give a premature complete every chance to arrive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await outstanding(HOLD_MODEL)).toBe(1);
    await releaseHeld("st-hold");
    while (!(await reader.read()).done);
    await waitFor(async () => (await outstanding(HOLD_MODEL)) === 0);
  });

  it("complete runs after a client abort: load returns to zero", async () => {
    const res = await chat(HOLD_MODEL, [{ role: "user", content: "bye" }], { stream: true });
    expect(res.headers.get("x-router-origin")).toBe("st-hold");
    const reader = res.body!.getReader();
    await reader.read();
    expect(await outstanding(HOLD_MODEL)).toBe(1);
    await reader.cancel();
    await waitFor(async () => (await outstanding(HOLD_MODEL)) === 0, 5000, "load to drop");
    await releaseHeld("st-hold");
    const state = await objectState(HOLD_MODEL);
    expect(state?.router.failures.stream ?? 0).toBe(0);
  });
});
