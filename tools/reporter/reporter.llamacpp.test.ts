/**
 * The reporter beside a real llama-server (skipped, saying why, when none is found through
 * LLAMA_SERVER or PATH): its sample is the server's own counters, its prefill-rate is their
 * difference between two looks, and a restarted server (counters back to zero) is a cache-reset.
 * The router is a stub that keeps what was posted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findLlamaServer, type LlamaServer, startLlamaServer } from "../llama/llama-server.ts";
import { ensureModel } from "../llama/model.ts";
import { readEngineMetrics } from "./engine-metrics.ts";
import { createReporter } from "./reporter.ts";
import { MIN_PREFILL_SECONDS } from "./reporter-state.ts";

const found = findLlamaServer();
if ("missing" in found) console.warn(`llama.cpp reporter test skipped: ${found.missing}`);

const dir = mkdtempSync(join(tmpdir(), "llama-reporter-"));
let server: LlamaServer | undefined;

beforeAll(async () => {
  if ("missing" in found) return;
  const model = await ensureModel({ size: "tiny", dir });
  server = await startLlamaServer({ binary: found.path, model, id: "tiny", ctxTokens: 4096 });
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function chat(content: string): Promise<void> {
  const res = await fetch(`${server?.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content }], max_tokens: 4 }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(res.status).toBe(200);
  await res.json();
}

async function counters() {
  const res = await fetch(`${server?.url}/metrics`);
  return readEngineMetrics(await res.text(), "llamacpp");
}

/** A reporter whose router is a stub answering 200 to every batch. */
function reporter() {
  const posted: unknown[] = [];
  const stub: typeof fetch = async (input, init) => {
    if (String(input).startsWith("http://router.test")) {
      posted.push(JSON.parse(String(init?.body)));
      return Response.json({ ok: true });
    }
    return fetch(input, init);
  };
  const r = createReporter({
    engine: server?.url as string,
    kind: "llamacpp",
    origin: "tiny",
    router: "http://router.test",
    secret: "test-secret",
    intervalMs: 1000,
    fetch: stub,
  });
  return { r, posted };
}

describe.skipIf("missing" in found)("the llamacpp reporter on a real llama-server", () => {
  it("samples the server's counters, measures prefill from them, and sees a restart", async () => {
    const { r, posted } = reporter();
    await chat("a first prompt, long enough to take the engine some time: ".repeat(8));
    const first = await r.tick();
    expect(first.observation.ok).toBe(true);
    const before = await counters();
    expect(first.observation.ok && first.observation.sample).toEqual(before);
    expect(before.prefill?.tokens).toBeGreaterThan(400);

    // Prefill until the span passes the reporter's minimum (the tiny model is quick).
    for (let k = 0; k < 40; k++) {
      await chat(`prompt ${k}, with nothing in common with the others: `.repeat(8));
      const seconds = (await counters()).prefill?.seconds ?? 0;
      if (seconds - (before.prefill?.seconds ?? 0) >= 2 * MIN_PREFILL_SECONDS) break;
    }
    const second = await r.tick();
    const after = await counters();
    const rate = second.events.find((e) => e.type === "prefill-rate");
    const tokens = (after.prefill?.tokens ?? 0) - (before.prefill?.tokens ?? 0);
    const seconds = (after.prefill?.seconds ?? 0) - (before.prefill?.seconds ?? 0);
    expect(rate).toEqual({ type: "prefill-rate", tokens, tokensPerSecond: tokens / seconds });
    expect(second.result.ok).toBe(true);
    expect(posted).toHaveLength(2);

    await server?.restart();
    const third = await r.tick();
    expect(third.events.map((e) => e.type)).toEqual(["cache-reset", "health", "load"]);
  }, 60_000);
});
