import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachedOf, chatBody, engine, post, usageOf } from "../../test-support/pd-pair.ts";
import type { RunningEngine } from "../engine-server.ts";

let prefill: RunningEngine;
let decode: RunningEngine;
let room = 1000;

beforeAll(async () => {
  const bootstrapTimeoutMs = 400;
  prefill = await engine("p", { protocol: "sglang", role: "prefill", bootstrapTimeoutMs });
  decode = await engine("d", { protocol: "sglang", role: "decode", bootstrapTimeoutMs });
});
afterAll(() => Promise.all([prefill, decode].map((e) => e.close())));

/** The bootstrap fields a router adds to both legs. */
function bootstrap(r: number) {
  const [host, port] = (prefill.pd?.endpoint ?? "").split(":");
  return { bootstrap_host: host, bootstrap_port: Number(port), bootstrap_room: r };
}

describe("sglang engines", () => {
  it("meet in the room when both legs come at once; the decode reports the prefill's hit", async () => {
    // The prefill engine holds part of the prompt: its hit is what both legs report.
    await post(prefill.url, chatBody("alpha", {}, 300));
    const r = room++;
    const [p, d] = await Promise.all([
      post(prefill.url, chatBody("alpha", { ...bootstrap(r), stream: false }, 500)),
      post(decode.url, chatBody("alpha", { ...bootstrap(r), max_tokens: 6 }, 500)),
    ]);
    expect([p.status, d.status]).toEqual([200, 200]);
    expect(usageOf(p.json).completion_tokens).toBe(1);
    expect(usageOf(d.json).completion_tokens).toBe(6);
    expect(cachedOf(p.json)).toBeGreaterThan(0);
    expect(cachedOf(d.json)).toBe(cachedOf(p.json));
  });

  it("wait for each other whichever comes first", async () => {
    const r = room++;
    const d = post(decode.url, chatBody("bravo", { ...bootstrap(r), stream: true }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const p = await post(prefill.url, chatBody("bravo", bootstrap(r)));
    expect(p.status).toBe(200);
    const streamed = await d;
    expect(streamed.status).toBe(200);
    expect(streamed.events.length).toBeGreaterThan(2);
  });

  it("time out alone: a prefill no decode joins, a decode no prefill joins", async () => {
    const [p, d] = await Promise.all([
      post(prefill.url, chatBody("charlie", bootstrap(room++))),
      post(decode.url, chatBody("delta", bootstrap(room++))),
    ]);
    expect(p.status).toBe(500);
    expect((p.json.error as { message: string }).message).toMatch(/no decode engine took/);
    expect(d.status).toBe(500);
  });

  it("a decode engine cannot serve a request without the bootstrap fields", async () => {
    const d = await post(decode.url, chatBody("echo"));
    expect(d.status).toBe(500);
    expect((d.json.error as { message: string }).message).toMatch(/bootstrap_room are required/);
  });

  it("a decode engine refuses KV of another prompt", async () => {
    const r = room++;
    const [p, d] = await Promise.all([
      post(prefill.url, chatBody("foxtrot", bootstrap(r))),
      post(decode.url, chatBody("golf", bootstrap(r))),
    ]);
    expect(p.status).toBe(200);
    expect(d.status).toBe(500);
  });
});
