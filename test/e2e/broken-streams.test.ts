/**
 * End to end: origins that break, stall or redirect behind the real Worker in `wrangler dev`,
 * read with the official `openai` client, and the runtime's own log watched for the
 * `Uncaught Error: Network connection lost` lines a broken stream used to print (three per
 * stream: the runtime reports a response body that errors as an uncaught exception). An SSE
 * stream the origin breaks or lets stall now ends with an error event, so nothing errors; only a
 * JSON body cut short is still aborted (the one way to tell its client), and that case is the
 * control showing the log is really being read.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterStats } from "../../src/core/router/router-types.ts";
import { startTestOrigins, type TestOrigins } from "../../src/worker/test/origin-server.node.ts";
import { freePort } from "../../tools/local-stack/stack.ts";
import { startWranglerDev, type WranglerDev } from "../../tools/local-stack/wrangler-dev.ts";

const root = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "router-broken-"));
const ADMIN_TOKEN = "broken-streams-admin-token";
const log: string[] = [];
let origins: TestOrigins;
let dev: WranglerDev;
let client: OpenAI;

beforeAll(async () => {
  origins = await startTestOrigins();
  const devVars = join(dir, "dev.vars");
  writeFileSync(devVars, `ADMIN_TOKEN=${ADMIN_TOKEN}\nWEBHOOK_SECRET=broken-streams-secret\n`);
  dev = await startWranglerDev({
    cwd: root,
    port: await freePort(),
    persistTo: join(dir, "state"),
    envFile: devVars,
    log: (line) => log.push(line),
  });
  const one = (behaviour: string, extra: object = {}) => ({
    origins: [{ id: `e2e-${behaviour}`, url: `${origins.base}/${behaviour}/e2e-${behaviour}` }],
    access: "open",
    retry: { maxAttempts: 1 },
    ...extra,
  });
  const settings = {
    pools: {
      die: one("midstream"),
      "die-partial": one("midstream-partial"),
      stall: one("stall-midstream", { streamIdleTimeoutMs: 500 }),
      redirect: {
        access: "open",
        policy: { type: "round-robin" },
        origins: [
          { id: "e2e-redirect", url: `${origins.base}/redirect/e2e-redirect` },
          { id: "e2e-ok", url: `${origins.base}/ok/e2e-ok` },
        ],
      },
    },
  };
  const res = await fetch(`${dev.url}/admin/settings`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify(settings),
  });
  if (!res.ok) throw new Error(`PUT /admin/settings: ${res.status} ${await res.text()}`);
  client = new OpenAI({ baseURL: `${dev.url}/v1`, apiKey: "unused", maxRetries: 0 });
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  await origins?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function state(model: string): Promise<RouterStats> {
  const res = await fetch(`${dev.url}/admin/state?model=${model}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return ((await res.json()) as { object: { router: RouterStats } }).object.router;
}

/** The runtime's "Uncaught" lines printed while `run` goes and until the request is settled. */
async function uncaughtDuring(model: string, run: () => Promise<void>): Promise<string[]> {
  const from = log.length;
  await run();
  const end = Date.now() + 5000;
  while ((await state(model)).outstanding > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
  }
  // The runtime prints as the body ends; give its output pipe a moment to arrive.
  await new Promise((r) => setTimeout(r, 300));
  return log.slice(from).filter((line) => /uncaught/i.test(line));
}

async function drainStream(model: string): Promise<unknown> {
  const stream = await client.chat.completions.create({
    model,
    stream: true,
    messages: [{ role: "user", content: "hello" }],
  });
  try {
    for await (const _ of stream);
  } catch (error) {
    return error;
  }
  return null;
}

describe("broken and stalled origins under wrangler dev", () => {
  it("a stream the origin breaks: the client gets the router's APIError, nothing is logged as Uncaught", async () => {
    let error: unknown;
    const uncaught = await uncaughtDuring("die", async () => {
      error = await drainStream("die");
    });
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).code).toBe("origin_stream_error");
    expect(uncaught).toEqual([]);
    expect((await state("die")).failures).toEqual({ stream: 1 });
  });

  it("a stream broken inside an event ends as cleanly", async () => {
    let text = "";
    const uncaught = await uncaughtDuring("die-partial", async () => {
      const res = await fetch(`${dev.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({
          model: "die-partial",
          stream: true,
          messages: [{ role: "user", content: "hi" }],
        }),
      });
      text = await res.text();
    });
    expect(text).toContain('"code":"origin_stream_error"');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(uncaught).toEqual([]);
  });

  it("a stream the origin lets stall: ended with stream_idle_timeout, nothing logged as Uncaught", async () => {
    let error: unknown;
    const uncaught = await uncaughtDuring("stall", async () => {
      error = await drainStream("stall");
    });
    expect((error as APIError).code).toBe("stream_idle_timeout");
    expect(uncaught).toEqual([]);
  });

  it("an origin's 3xx: the next origin answers, no Location reaches the client", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "redirect", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(data.id).toBe("e2e-ok");
    expect(response.headers.get("x-router-origin")).toBe("e2e-ok");
    expect(response.headers.get("location")).toBeNull();
  });

  it("control: a JSON body cut short is aborted, which the runtime does log", async () => {
    let failed = false;
    const from = log.length;
    const uncaught = await uncaughtDuring("stall", async () => {
      const res = await fetch(`${dev.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "stall", messages: [{ role: "user", content: "hi" }] }),
      });
      failed = await res.text().then(
        () => false,
        () => true,
      );
    });
    expect(failed).toBe(true);
    // On a loaded machine the runtime's lines can come later than uncaughtDuring's window:
    // wait for them here (the other tests' windows only bound how long "nothing" is watched).
    const end = Date.now() + 5000;
    while (uncaught.length === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      uncaught.push(...log.slice(from).filter((line) => /uncaught/i.test(line)));
    }
    expect(uncaught.length).toBeGreaterThan(0);
  });
});
