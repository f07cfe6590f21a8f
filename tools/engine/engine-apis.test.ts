import OpenAI, { NotFoundError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { profileNamed } from "../../sim/engine/profiles.ts";
import { DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import {
  type AgentConversation,
  chatBody,
  codingSession,
  messagesBody,
  responsesBody,
  upTo,
} from "../../src/core/test-support/agent-conversation.ts";
import { type RunningEngine, startEngineServer } from "./engine-server.ts";

type Json = Record<string, unknown>;
interface MessageAnswer {
  id: string;
  usage: { input_tokens: number; cache_read_input_tokens: number; output_tokens: number };
}
interface ResponseAnswer {
  id: string;
  previous_response_id: string | null;
  output: { content: { type: string; text: string }[] }[];
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } };
}
/** The fields of the streamed events these tests read. */
interface EventData {
  type: string;
  sequence_number: number;
  message: MessageAnswer;
  response: ResponseAnswer;
  delta: string & { text: string };
  usage: unknown;
}

const start = (id: string, storedResponses?: number) =>
  startEngineServer({
    id,
    port: 0,
    profile: profileNamed("llama-3.1-8b-h100"),
    timeScale: 50,
    storedResponses,
  });

let engine: RunningEngine;
beforeAll(async () => {
  engine = await start("t");
});
afterAll(() => engine.close());

const post = (path: string, body: unknown, to = engine) =>
  fetch(`${to.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const json = async (res: Response) => (await res.json()) as Json;
const message = async (res: Response) => (await res.json()) as MessageAnswer;
const response = async (res: Response) => (await res.json()) as ResponseAnswer;

/** SSE events as [name, data]. */
async function events(res: Response): Promise<[string, EventData][]> {
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  return (await res.text())
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [name, data] = block.split("\n") as [string, string];
      return [name.slice("event: ".length), JSON.parse(data.slice("data: ".length))];
    });
}

const long = "the quick brown fox jumps over the lazy dog ".repeat(200);

describe("Anthropic Messages", () => {
  const body = (extra: Json = {}) => ({
    model: "m",
    max_tokens: 3,
    system: "be brief",
    messages: [{ role: "user", content: [{ type: "text", text: long }] }],
    ...extra,
  });

  it("answers a message; a repeat reports cache_read_input_tokens, input_tokens the rest", async () => {
    const first = await message(await post("/v1/messages", body()));
    expect(first).toMatchObject({
      type: "message",
      role: "assistant",
      stop_reason: "max_tokens",
      content: [{ type: "text" }],
      usage: { cache_read_input_tokens: 0, output_tokens: 3 },
    });
    expect(first.id).toMatch(/^msg_/);
    const second = await message(await post("/v1/messages", body()));
    const { input_tokens, cache_read_input_tokens } = second.usage;
    expect(input_tokens + cache_read_input_tokens).toBe(first.usage.input_tokens);
    expect(cache_read_input_tokens).toBeGreaterThan(first.usage.input_tokens - 64);
  });

  it("streams Anthropic's events; message_start carries the input side of the usage", async () => {
    const list = await events(await post("/v1/messages", body({ stream: true, max_tokens: 4 })));
    const names = list.map(([name]) => name);
    expect(names[0]).toBe("message_start");
    expect(names[1]).toBe("content_block_start");
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    for (const [name, data] of list) expect(data.type).toBe(name);
    expect(list[0]?.[1].message.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(list.at(-2)?.[1].usage).toEqual({ output_tokens: 4 });
    const text = list
      .filter(([name]) => name === "content_block_delta")
      .map(([, data]) => data.delta.text)
      .join("");
    expect(text.split(" ").filter(Boolean)).toHaveLength(4);
  });

  it("count_tokens counts the prompt the router's key estimates, as a message's usage does", async () => {
    const { max_tokens: _, ...request } = body();
    const counted = (await json(await post("/v1/messages/count_tokens", request))) as {
      input_tokens: number;
    };
    expect(counted).toEqual({
      input_tokens: promptKey(request, DEFAULT_CHUNK_BYTES, "messages").promptTokens,
    });
    const answer = await message(await post("/v1/messages", body()));
    expect(answer.usage.input_tokens + answer.usage.cache_read_input_tokens).toBe(
      counted.input_tokens,
    );
  });

  it("bad bodies get 400 in Anthropic's error shape", async () => {
    const { max_tokens: _, ...noMax } = body();
    for (const bad of [noMax, body({ messages: [] }), body({ max_tokens: 0 })]) {
      const res = await post("/v1/messages", bad);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: expect.any(String) },
      });
    }
  });
});

describe("OpenAI Responses", () => {
  const body = (extra: Json = {}) => ({
    model: "m",
    max_output_tokens: 3,
    instructions: "be brief",
    input: `responses: ${long}`,
    ...extra,
  });

  it("answers a response; a repeat reports input_tokens_details.cached_tokens", async () => {
    const first = await response(await post("/v1/responses", body({ store: false })));
    expect(first).toMatchObject({
      object: "response",
      status: "completed",
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text" }] }],
      usage: { output_tokens: 3, input_tokens_details: { cached_tokens: 0 } },
    });
    expect(first.id).toMatch(/^resp_/);
    const second = await response(await post("/v1/responses", body({ store: false })));
    expect(second.usage.input_tokens).toBe(first.usage.input_tokens);
    expect(second.usage.input_tokens_details.cached_tokens).toBeGreaterThan(
      first.usage.input_tokens - 64,
    );
  });

  it("streams response.created ... response.completed in sequence, the usage at the end", async () => {
    const list = await events(
      await post("/v1/responses", body({ stream: true, max_output_tokens: 4 })),
    );
    const names = list.map(([name]) => name);
    expect(names.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(names.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(list.map(([, data]) => data.sequence_number)).toEqual(list.map((_, i) => i));
    const id = list[0]?.[1].response.id;
    const completed = list.at(-1)?.[1].response as ResponseAnswer;
    expect(completed.id).toBe(id);
    expect(completed.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    const deltas = list.filter(([name]) => name === "response.output_text.delta");
    expect(deltas.map(([, data]) => data.delta).join("")).toBe(
      completed.output[0]?.content[0]?.text,
    );
    // Stored once complete, streamed or not.
    expect(await json(await fetch(`${engine.url}/v1/responses/${id}`))).toEqual(completed);
  });

  it("previous_response_id continues the stored conversation, which the cache already holds", async () => {
    const first = await response(await post("/v1/responses", body()));
    const followUp = { input: "and now the next step", max_output_tokens: 3, model: "m" };
    const next = await response(
      await post("/v1/responses", {
        ...followUp,
        instructions: "be brief",
        previous_response_id: first.id,
      }),
    );
    expect(next.previous_response_id).toBe(first.id);
    // The same prompt as the whole conversation sent again (store: false, nothing to continue).
    const whole = {
      ...body({ store: false }),
      input: [
        { role: "user", content: `responses: ${long}` },
        { type: "message", role: "assistant", content: first.output[0]?.content },
        { role: "user", content: followUp.input },
      ],
    };
    expect(next.usage.input_tokens).toBe(
      promptKey(whole, DEFAULT_CHUNK_BYTES, "responses").promptTokens,
    );
    expect(next.usage.input_tokens_details.cached_tokens).toBeGreaterThan(
      first.usage.input_tokens - 64,
    );
  });

  it("an unknown previous_response_id is vLLM's 404 in OpenAI's shape", async () => {
    const res = await post("/v1/responses", body({ previous_response_id: "resp_nope" }));
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({
      error: {
        message: "Response with id 'resp_nope' not found.",
        type: "invalid_request_error",
        param: "response_id",
        code: 404,
      },
    });
  });

  it("GET shows a stored response, DELETE forgets it; store: false keeps nothing", async () => {
    const stored = await response(await post("/v1/responses", body()));
    const url = `${engine.url}/v1/responses/${stored.id}`;
    expect(await json(await fetch(url))).toEqual(stored);
    const deleted = await fetch(url, { method: "DELETE" });
    expect(await json(deleted)).toEqual({ id: stored.id, object: "response", deleted: true });
    expect((await fetch(url)).status).toBe(404);
    expect((await fetch(url, { method: "DELETE" })).status).toBe(404);
    const unstored = await response(await post("/v1/responses", body({ store: false })));
    expect((await fetch(`${engine.url}/v1/responses/${unstored.id}`)).status).toBe(404);
  });

  it("keeps a bounded number of stored responses, forgetting the least recently used", async () => {
    const small = await start("small", 2);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await response(await post("/v1/responses", body(), small))).id);
      expect(small.responses.size).toBe(2);
      const status = async (id: string) => (await fetch(`${small.url}/v1/responses/${id}`)).status;
      expect([await status(ids[0] as string), await status(ids[2] as string)]).toEqual([404, 200]);
    } finally {
      await small.close();
    }
  });

  it("the official openai client reads its answers, streamed and not, and its 404", async () => {
    const client = new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const first = await client.responses.create({
      model: "m",
      input: `sdk: ${long}`,
      max_output_tokens: 3,
    });
    expect(first.output_text.split(" ").filter(Boolean)).toHaveLength(3);
    const stream = client.responses.stream({
      model: "m",
      input: "and again",
      previous_response_id: first.id,
      max_output_tokens: 2,
    });
    const types = new Set<string>();
    for await (const event of stream) types.add(event.type);
    const next = await stream.finalResponse();
    expect(types).toContain("response.output_text.delta");
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect((await client.responses.retrieve(next.id)).id).toBe(next.id);
    await client.responses.delete(next.id);
    await expect(client.responses.retrieve(next.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("bad bodies get 400 in OpenAI's error shape", async () => {
    for (const bad of [body({ input: 5 }), body({ max_output_tokens: -1 }), { input: "x" }]) {
      const res = await post("/v1/responses", bad);
      expect(res.status).toBe(400);
      expect((await json(res)).error).toMatchObject({ type: "invalid_request_error" });
    }
  });
});

/** Any API's usage, as the session test reads it. */
interface Usage {
  prompt_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  input_tokens: number;
  cache_read_input_tokens: number;
  input_tokens_details: { cached_tokens: number };
}

describe("one agent session through every API", () => {
  it("shares one cache: a conversation sent through chat is a hit through Messages and Responses", async () => {
    const text = `shared: ${long}`;
    const chat = {
      model: "m",
      max_tokens: 1,
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: text },
      ],
    };
    const first = (await json(await post("/v1/chat/completions", chat))) as { usage: Usage };
    const viaMessages = await message(
      await post("/v1/messages", {
        model: "m",
        max_tokens: 1,
        system: "s",
        messages: [{ role: "user", content: text }],
      }),
    );
    const viaResponses = await response(
      await post("/v1/responses", { model: "m", instructions: "s", input: text, store: false }),
    );
    const prompt = first.usage.prompt_tokens;
    expect(viaMessages.usage.cache_read_input_tokens).toBeGreaterThan(prompt - 64);
    expect(viaResponses.usage.input_tokens_details.cached_tokens).toBeGreaterThan(prompt - 64);
  });

  /** Turn by turn, as an agent sends it: after each user message and each tool result. */
  async function cachedFraction(
    to: RunningEngine,
    write: (model: string, c: AgentConversation) => Json,
    path: string,
    read: (usage: Usage) => { prompt: number; cached: number },
  ): Promise<number> {
    const session = codingSession(45);
    let prompt = 0;
    let cached = 0;
    for (let k = 1; k <= session.turns.length; k++) {
      if (session.turns[k - 1]?.kind === "assistant") continue;
      const request = { ...write("m", upTo(session, k)), max_tokens: 2, max_output_tokens: 2 };
      const answer = (await json(await post(path, request, to))) as { usage: Usage };
      const usage = read(answer.usage);
      prompt += usage.prompt;
      cached += usage.cached;
    }
    return cached / prompt;
  }

  it("reaches the same engine-reported cached fraction over 30 requests (within 0.02)", async () => {
    const engines = await Promise.all(["chat", "messages", "responses"].map((id) => start(id)));
    try {
      const [chat, messages, responses] = await Promise.all([
        cachedFraction(engines[0] as RunningEngine, chatBody, "/v1/chat/completions", (u) => ({
          prompt: u.prompt_tokens,
          cached: u.prompt_tokens_details?.cached_tokens ?? 0,
        })),
        cachedFraction(engines[1] as RunningEngine, messagesBody, "/v1/messages", (u) => ({
          prompt: u.input_tokens + u.cache_read_input_tokens,
          cached: u.cache_read_input_tokens,
        })),
        cachedFraction(engines[2] as RunningEngine, responsesBody, "/v1/responses", (u) => ({
          prompt: u.input_tokens,
          cached: u.input_tokens_details.cached_tokens,
        })),
      ]);
      expect(chat).toBeGreaterThan(0.8);
      expect(Math.abs(messages - chat)).toBeLessThanOrEqual(0.02);
      expect(Math.abs(responses - chat)).toBeLessThanOrEqual(0.02);
    } finally {
      await Promise.all(engines.map((e) => e.close()));
    }
  });
});
