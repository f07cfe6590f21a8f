/**
 * End to end on real engines: the Worker under `wrangler dev` (the local stack) in front of
 * three llama.cpp servers running the project's tiny random model (tools/llama), read with the
 * official `openai` client. What the simulator cannot show: that a real engine's prompt cache
 * holds a conversation where the router sent it, and that the `cached_tokens` it reports,
 * streamed or not, reach the router's index, including the engine's own crashes and restarts.
 * Skipped, saying why, when no llama-server is found (LLAMA_SERVER or PATH); `.ci/run` points
 * LLAMA_SERVER at ../shared/engines/llama-server.
 */
import { rmSync } from "node:fs";
import type OpenAI from "openai";
import { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OriginStats, RouterStats } from "../../src/core/router/router-types.ts";
import { findLlamaServer, type LlamaServer } from "../../tools/llama/llama-server.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { promptText } from "../../tools/replay/prompt-text.ts";
import { e2eDir, routerClient } from "./e2e-stack.ts";
import { type LlamaStack, startLlamaStack } from "./llama-stack.ts";

const MODEL = "real";
const found = findLlamaServer();
if ("missing" in found) console.warn(`real-engine tests skipped: ${found.missing}`);

const dir = e2eDir("router-real-e2e-");
let llama: LlamaStack | undefined;
let stack: Stack | undefined;
let servers: readonly LlamaServer[] = [];
let client: OpenAI;

beforeAll(async () => {
  if ("missing" in found) return;
  llama = await startLlamaStack(found.path, dir, ["llama-a", "llama-b", "llama-c"], MODEL);
  ({ stack, servers } = llama);
  client = routerClient(stack);
}, 90_000);

afterAll(async () => {
  await llama?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function state(): Promise<RouterStats> {
  const res = await fetch(`${stack?.routerUrl}/admin/state?model=${MODEL}`, {
    headers: { authorization: `Bearer ${stack?.secrets.ADMIN_TOKEN}` },
  });
  return ((await res.json()) as { object: { router: RouterStats } }).object.router;
}

async function origin(id: string): Promise<OriginStats> {
  const o = (await state()).origins.find((x) => x.id === id);
  if (!o) throw new Error(`no origin ${id} in the pool's state`);
  return o;
}

/** Polls `check` until it holds (completions reach the pool's object after the answer ends). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `bytes` of text (one token per byte on these engines, a quarter of that to the router). */
const document = (id: number, bytes: number) => promptText([id, id + 1, id + 2], bytes / 4);

type Message = { role: "system" | "user" | "assistant"; content: string };

/** One unstreamed chat completion: its text, the origin that served it, its usage. */
async function ask(messages: Message[]) {
  const { data, response } = await client.chat.completions
    .create({ model: MODEL, messages, max_tokens: 8 })
    .withResponse();
  return {
    text: data.choices[0]?.message.content ?? "",
    origin: response.headers.get("x-router-origin") ?? "",
    matched: Number(response.headers.get("x-router-matched-tokens")),
    cached: data.usage?.prompt_tokens_details?.cached_tokens ?? -1,
  };
}

/** One streamed chat completion with usage in its last chunk. */
async function askStreaming(messages: Message[]) {
  const { data: stream, response } = await client.chat.completions
    .create({
      model: MODEL,
      messages,
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    })
    .withResponse();
  let cached = -1;
  for await (const chunk of stream) {
    if (chunk.usage) cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? -1;
  }
  return { origin: response.headers.get("x-router-origin") ?? "", cached };
}

describe.skipIf("missing" in found)("the router in front of real llama-servers", () => {
  it("a conversation's later turns land on the origin that holds them, and the engine reports them cached", async () => {
    const messages: Message[] = [{ role: "system", content: document(100, 3000) }];
    const served = new Set<string>();
    for (let turn = 0; turn < 3; turn++) {
      messages.push({ role: "user", content: document(200 + 10 * turn, 800) });
      const answer = await ask(messages);
      served.add(answer.origin);
      messages.push({ role: "assistant", content: answer.text });
      if (turn > 0) {
        expect(answer.matched).toBeGreaterThan(700); // router tokens: ~4 bytes each
        expect(answer.cached).toBeGreaterThan(3000 + 800 * turn);
      }
    }
    expect(served.size).toBe(1);
    expect([...served][0]).toMatch(/^llama-[abc]$/);
  });

  it("the index learns the engine's cached tokens from unstreamed and streamed answers", async () => {
    const messages: Message[] = [{ role: "user", content: document(300, 2000) }];
    await ask(messages); // warms an engine
    for (const [how, send] of [
      ["unstreamed", ask],
      ["streamed", askStreaming],
    ] as const) {
      const before = (await state()).accuracy;
      const { cached } = await send(messages);
      expect(cached, how).toBeGreaterThan(1900);
      await eventually(
        async () => (await state()).accuracy.reports > before.reports,
        `the ${how} completion's report`,
      );
      const after = (await state()).accuracy;
      expect(after.reports - before.reports, how).toBe(1);
      expect(after.cachedTokens - before.cachedTokens, how).toBe(cached);
    }
  });

  it("an engine restarted with an empty cache is corrected by its next cached_tokens", async () => {
    const messages: Message[] = [{ role: "user", content: document(400, 3000) }];
    const warm = await ask(messages);
    const confirmed = await ask(messages);
    expect(confirmed.origin).toBe(warm.origin);
    expect(confirmed.cached).toBeGreaterThan(2900);
    await eventually(
      async () => (await state()).outstanding === 0,
      "the warm-up completions to settle",
    );
    const capacity = (await origin(warm.origin)).capacityTokens;
    const before = (await state()).accuracy;

    await servers.find((s) => s.id === warm.origin)?.restart();
    const cold = await ask(messages);
    expect(cold.origin).toBe(warm.origin); // the index still believes it holds the prompt
    expect(cold.matched).toBeGreaterThan(700);
    expect(cold.cached).toBe(0); // the engine does not
    await eventually(
      async () => (await state()).accuracy.reports > before.reports,
      "the cold completion's report",
    );
    const after = (await state()).accuracy;
    expect(after.cachedTokens - before.cachedTokens).toBe(0);
    expect(after.predictedTokens - before.predictedTokens).toBe(cold.matched);
    // A miss the index predicted as a hit shrinks what it lets the origin hold.
    expect((await origin(warm.origin)).capacityTokens).toBeLessThan(capacity);
    const again = await ask(messages);
    expect(again.origin).toBe(warm.origin);
    expect(again.cached).toBeGreaterThan(2900);
  });

  it("an engine killed mid-stream: the stream ends with origin_stream_error, its load returns to zero", async () => {
    // ignore_eos (llama.cpp's) keeps the random model talking for seconds.
    const body = {
      model: MODEL,
      messages: [{ role: "user" as const, content: document(500, 1000) }],
      max_tokens: 3000,
      stream: true as const,
      ignore_eos: true,
    };
    const { data: stream, response } = await client.chat.completions.create(body).withResponse();
    const id = response.headers.get("x-router-origin") ?? "";
    const server = servers.find((s) => s.id === id);
    expect(server).toBeDefined();
    let chunks = 0;
    let error: unknown = null;
    try {
      for await (const _ of stream) {
        if (++chunks === 3) server?.kill();
      }
    } catch (e) {
      error = e;
    }
    expect(chunks).toBeGreaterThanOrEqual(3);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).code).toBe("origin_stream_error");
    await eventually(async () => (await state()).outstanding === 0, "the request to settle");
    const o = await origin(id);
    expect(o.outstanding).toBe(0);
    expect(o.queuedPrefillTokens).toBe(0);
    expect((await state()).failures.stream).toBe(1);
    await server?.restart();
  });
});
