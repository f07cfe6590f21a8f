/**
 * End to end: the official `openai` client against the whole local stack (wrangler dev with the
 * real Worker and Durable Object, simulated engines over HTTP, reporters posting signed
 * webhooks). The short version of `npm start`, run by `npm test`. Edge-coordinated pools too:
 * the Worker's isolate routes with its replica and syncs with the pool's coordinator object.
 */
import { rmSync } from "node:fs";
import type OpenAI from "openai";
import { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterStats } from "../../src/core/router/router-types.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { promptText } from "../../tools/replay/prompt-text.ts";
import { e2eDir, routerClient, startE2eStack } from "./e2e-stack.ts";

const dir = e2eDir("router-e2e-");
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startE2eStack(dir, {
    origins: 3,
  });
  const origins = stack.originSettings();
  await stack.putSettings({
    pools: {
      chat: { origins, policy: { type: "cost" } },
      sessions: { origins, policy: { type: "cost" } },
      failover: { origins, policy: { type: "round-robin" }, circuit: { failureThreshold: 2 } },
      small: { origins, maxBodyBytes: 2048 },
      "edge-sessions": { origins, policy: { type: "cost" }, coordination: "edge" },
    },
  });
  client = routerClient(stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface PoolState {
  object: {
    router: RouterStats;
    metrics: { origins: Record<string, { requests: { ok?: number } }> };
  };
  coordinators?: { counters: { recordsApplied: number } }[];
  replica?: { degraded: boolean; counters: { answers: number } } | null;
}

async function poolState(model: string): Promise<PoolState> {
  const res = await fetch(`${stack.routerUrl}/admin/state?model=${model}`, {
    headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
  });
  return (await res.json()) as PoolState;
}

async function state(model: string): Promise<RouterStats> {
  return (await poolState(model)).object.router;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const document = (id: number, tokens: number) =>
  promptText(
    Array.from({ length: Math.ceil(tokens / 512) }, (_, i) => id * 1000 + i),
    tokens,
  );

// First: the last test of the next block kills an engine.
describe("the openai client through an edge-coordinated pool", () => {
  it("a conversation's turns stay on one origin and find their prefix cached", async () => {
    const messages: { role: "user" | "assistant"; content: string }[] = [];
    const served = new Set<string | null>();
    for (let turn = 0; turn < 4; turn++) {
      messages.push({ role: "user", content: document(200 + turn, 1500) });
      const { data: stream, response } = await client.chat.completions
        .create({
          model: "edge-sessions",
          messages,
          max_tokens: 4,
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      let text = "";
      let cached = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      }
      served.add(response.headers.get("x-router-origin"));
      messages.push({ role: "assistant", content: text });
      if (turn > 0) {
        expect(Number(response.headers.get("x-router-matched-tokens"))).toBeGreaterThan(1000);
        expect(cached).toBeGreaterThan(1000 * turn);
      }
    }
    expect(served.size).toBe(1);
  });

  it("the coordinator hears every request (with its report) and the engines' webhooks", async () => {
    const served = (s: PoolState) =>
      Object.values(s.object.metrics.origins).reduce((n, o) => n + (o.requests.ok ?? 0), 0);
    const before = served(await poolState("edge-sessions"));
    const sent = 6;
    for (let k = 0; k < sent; k++) {
      await client.chat.completions.create({
        model: "edge-sessions",
        messages: [{ role: "user", content: document(300 + k, 600) }],
        max_tokens: 2,
      });
    }
    await eventually(
      async () => served(await poolState("edge-sessions")) >= before + sent,
      "the reports to reach the coordinator's metrics",
    );
    const s = await poolState("edge-sessions");
    expect(s.replica?.degraded).toBe(false);
    expect(s.coordinators?.[0]?.counters.recordsApplied).toBeGreaterThanOrEqual(sent);
    // Reporters post to the pool's root; the coordinator passes their load on.
    await eventually(
      async () => (await state("edge-sessions")).origins.every((o) => o.reportAgeMs !== null),
      "engine reports to reach the coordinator through the root",
    );
  });
});

describe("the openai client through the local router", () => {
  it("chat, non-streaming: an answer with usage", async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: "chat",
        messages: [{ role: "user", content: "hello there" }],
        max_tokens: 5,
      })
      .withResponse();
    expect(data.choices[0]?.message.content?.split(" ").filter(Boolean)).toHaveLength(5);
    expect(data.usage).toMatchObject({ completion_tokens: 5 });
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-router-origin")).toMatch(/^gpu-[abc]$/);
    expect(response.headers.get("x-router-policy")).toBe("cost");
  });

  it("chat, streaming: chunks, then usage with cached tokens growing on a repeated prefix", async () => {
    const content = document(1, 3000);
    const ask = async () => {
      const stream = await client.chat.completions.create({
        model: "chat",
        messages: [{ role: "user", content }],
        max_tokens: 8,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let cached = -1;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      }
      return { text, cached };
    };
    const first = await ask();
    const second = await ask();
    expect(first.text.split(" ").filter(Boolean)).toHaveLength(8);
    expect(first.cached).toBe(0);
    expect(second.cached).toBeGreaterThan(2500);
  });

  it("completions: a text answer with usage", async () => {
    const data = await client.completions.create({
      model: "chat",
      prompt: "Once upon a time",
      max_tokens: 4,
    });
    expect(data.object).toBe("text_completion");
    expect(data.choices[0]?.text.split(" ").filter(Boolean)).toHaveLength(4);
    expect(data.usage?.completion_tokens).toBe(4);
  });

  it("under cost, the turns of one conversation stay on one origin", async () => {
    const messages: { role: "user" | "assistant"; content: string }[] = [];
    const served = new Set<string | null>();
    for (let turn = 0; turn < 5; turn++) {
      messages.push({ role: "user", content: document(10 + turn, 1500) });
      const { data, response } = await client.chat.completions
        .create({ model: "sessions", messages, max_tokens: 4 })
        .withResponse();
      served.add(response.headers.get("x-router-origin"));
      messages.push({ role: "assistant", content: data.choices[0]?.message.content ?? "" });
      if (turn > 0)
        expect(Number(response.headers.get("x-router-matched-tokens"))).toBeGreaterThan(
          1000 * turn,
        );
    }
    expect(served.size).toBe(1);
  });

  it.each([
    ["no messages", 400, { model: "chat", messages: [] }],
    ["no model", 400, { messages: [{ role: "user", content: "x" }] }],
    ["unknown model", 404, { model: "nope", messages: [{ role: "user", content: "x" }] }],
    [
      "body over the pool's limit",
      413,
      { model: "small", messages: [{ role: "user", content: "x".repeat(4096) }] },
    ],
  ])("a malformed request (%s) surfaces as APIError %i", async (_name, status, body) => {
    const error = await client.chat.completions.create(body as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(status);
    expect((error as APIError).error).toMatchObject({
      type: expect.any(String),
      message: expect.any(String),
    });
  });

  it("killing an engine mid-run loses no request that had not started streaming", async () => {
    const victim = "gpu-b";
    const killAt = 400;
    const started = performance.now();
    const requests = Array.from({ length: 24 }, async (_, k) => {
      await new Promise((r) => setTimeout(r, k * 40));
      let firstChunkAt: number | null = null;
      try {
        const stream = await client.chat.completions.create({
          model: "failover",
          messages: [{ role: "user", content: document(100 + k, 2000) }],
          max_tokens: 64,
          stream: true,
        });
        for await (const chunk of stream)
          if (firstChunkAt === null && chunk) firstChunkAt = performance.now() - started;
        return { ok: true, firstChunkAt };
      } catch (error) {
        return { ok: false, firstChunkAt, error: String(error) };
      }
    });
    await new Promise((r) => setTimeout(r, killAt));
    await stack.killEngine(victim);
    const results = await Promise.all(requests);
    // A request may fail only if its stream had already begun when the engine died.
    for (const r of results) if (!r.ok) expect(r.firstChunkAt, r.error).not.toBeNull();
    expect(results.filter((r) => r.ok).length).toBeGreaterThan(12);
    // The router learns the origin is gone: its circuit opens (failures) or the reporter says down.
    const deadline = Date.now() + 15_000;
    let origin: RouterStats["origins"][number] | undefined;
    while (Date.now() < deadline) {
      origin = (await state("failover")).origins.find((o) => o.id === victim);
      if (origin && !origin.eligible) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(origin?.eligible).toBe(false);
    expect(origin?.health === "down" || origin?.circuit === "open").toBe(true);
    // Requests sent to it after it died were failed over (connection refused), not lost.
    expect((await state("failover")).failures.connect ?? 0).toBeGreaterThan(0);
  });
});
