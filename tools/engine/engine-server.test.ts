import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { profileNamed } from "../../sim/engine/profiles.ts";
import { readEngineMetrics } from "../reporter/engine-metrics.ts";
import { createReporter } from "../reporter/reporter.ts";
import { type RunningEngine, startEngineServer } from "./engine-server.ts";

let engine: RunningEngine;
beforeAll(async () => {
  engine = await startEngineServer({
    id: "t",
    port: 0,
    profile: profileNamed("llama-3.1-8b-h100"),
    timeScale: 50,
  });
});
afterAll(() => engine.close());

const long = "the quick brown fox jumps over the lazy dog ".repeat(200);
const post = (path: string, body: unknown) =>
  fetch(`${engine.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("engine simulator server", () => {
  it("answers chat with usage; a repeated prompt reports cached tokens as vLLM does", async () => {
    const body = { model: "m", messages: [{ role: "user", content: long }], max_tokens: 3 };
    const first = (await (await post("/v1/chat/completions", body)).json()) as {
      usage: Record<string, unknown>;
    };
    const second = (await (await post("/v1/chat/completions", body)).json()) as {
      usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
    };
    expect(first.usage.prompt_tokens_details).toBeUndefined();
    expect(second.usage.prompt_tokens_details?.cached_tokens).toBeGreaterThan(
      second.usage.prompt_tokens - 64,
    );
  });

  it("streams SSE chunks, then usage when asked, then [DONE]", async () => {
    const res = await post("/v1/completions", {
      model: "m",
      prompt: "hi",
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = (await res.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const usage = JSON.parse((events.at(-2) as string).slice(6)) as {
      usage: { completion_tokens: number };
    };
    expect(usage.usage.completion_tokens).toBe(4);
    const text = events
      .slice(0, -2)
      .map((e) => (JSON.parse(e.slice(6)) as { choices: { text: string }[] }).choices[0]?.text)
      .join("");
    expect(text.split(" ").filter(Boolean)).toHaveLength(4);
  });

  it("rejects bad bodies and prompts larger than its KV cache with 400", async () => {
    expect((await post("/v1/chat/completions", { model: "m", messages: [] })).status).toBe(400);
    const huge = { model: "m", prompt: "x".repeat(4 * 500_000), max_tokens: 1 };
    const res = await post("/v1/completions", huge);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /KV blocks/,
    );
  });

  it("exposes vLLM's metric names, which the reporter reads", async () => {
    const text = await (await fetch(`${engine.url}/metrics`)).text();
    const sample = readEngineMetrics(text, "vllm");
    expect(sample.kvCapacityTokens).toBe(engine.live.engine.cache.total * 64);
    expect(sample.lifeCounter).toBeGreaterThan(0);
    const sent: unknown[] = [];
    const reporter = createReporter({
      engine: engine.url,
      kind: "vllm",
      origin: "t",
      router: "http://router.test",
      secret: "s",
      intervalMs: 1000,
      fetch: (async (input: string | URL | Request, init?: RequestInit) => {
        if (String(input).startsWith("http://router.test")) {
          sent.push(JSON.parse(String(init?.body)));
          return new Response("{}");
        }
        return fetch(input, init);
      }) as typeof fetch,
    });
    await reporter.tick();
    expect(sent).toEqual([
      {
        origin: "t",
        id: expect.any(String),
        at: expect.any(Number),
        events: [
          { type: "health", status: "up" },
          { type: "capacity", kvCapacityTokens: sample.kvCapacityTokens },
          { type: "load", running: 0, waiting: 0, kvUsage: 0 },
        ],
      },
    ]);
  });
});
