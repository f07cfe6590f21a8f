/**
 * End to end, Anthropic's Messages API: the official `@anthropic-ai/sdk` client against the
 * local stack (wrangler dev with the real Worker and Durable Object, simulated engines that
 * speak `/v1/messages`), as Claude Code and the SDK's users call it: `messages.create` streamed
 * and not, a coding agent's session (system prompt, tools, tool_use and tool_result turns) whose
 * later turns land on its origin and report cached tokens (in an object-coordinated pool and an
 * edge-coordinated one), `countTokens`, and the SDK's typed
 * errors for the router's 400, 401, 404 and 429 in Anthropic's shape.
 */
import { rmSync } from "node:fs";
import Anthropic, {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  RateLimitError,
} from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { promptText } from "../../tools/replay/prompt-text.ts";
import { e2eDir, routerClient, startE2eStack } from "./e2e-stack.ts";

const dir = e2eDir("router-anthropic-e2e-");
const KEYED = "claude-keyed";
let stack: Stack;
let client: Anthropic;

beforeAll(async () => {
  stack = await startE2eStack(dir, { origins: 3 });
  const origins = stack.originSettings();
  await stack.putSettings({
    pools: {
      agents: { origins, policy: { type: "cost" } },
      "session-chat": { origins, policy: { type: "cost" } },
      "session-messages": { origins, policy: { type: "cost" } },
      "agents-edge": { origins, policy: { type: "cost" }, coordination: "edge" },
      [KEYED]: { origins },
    },
  });
  client = anthropic({ apiKey: "unused" });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK pointed at the router (it appends /v1/messages itself), without its retries. */
function anthropic(auth: { apiKey?: string; authToken?: string }): Anthropic {
  return new Anthropic({
    baseURL: stack.routerUrl,
    apiKey: auth.apiKey ?? null,
    authToken: auth.authToken ?? null,
    maxRetries: 0,
    timeout: 30_000,
  });
}

const document = (id: number, tokens: number) =>
  promptText(
    Array.from({ length: Math.ceil(tokens / 512) }, (_, i) => id * 1000 + i),
    tokens,
  );

const tools: Anthropic.Tool[] = [
  {
    name: "read_file",
    description: "Read a file of the repository",
    input_schema: { type: "object", properties: { path: { type: "string" } } },
  },
  {
    name: "run_tests",
    description: "Run the test suite",
    input_schema: { type: "object", properties: {} },
  },
];

describe("@anthropic-ai/sdk through the router", () => {
  it("messages.create, not streamed: a message with text and Anthropic's usage", async () => {
    const { data, response } = await client.messages
      .create({
        model: "agents",
        max_tokens: 5,
        messages: [{ role: "user", content: "hello there" }],
      })
      .withResponse();
    expect(data.type).toBe("message");
    expect(data.role).toBe("assistant");
    const text = data.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text.split(" ").filter(Boolean)).toHaveLength(5);
    expect(data.usage.output_tokens).toBe(5);
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-router-origin")).toMatch(/^gpu-[abc]$/);
  });

  it("messages.create, streamed: the SDK's events, ending in message_stop", async () => {
    const stream = await client.messages.create({
      model: "agents",
      max_tokens: 6,
      stream: true,
      messages: [{ role: "user", content: "stream to me" }],
    });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta")
        text += event.delta.text;
    }
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(text.split(" ").filter(Boolean)).toHaveLength(6);
  });

  it("a coding agent's session with tools: later turns stay on one origin and read their prefix from cache", async () => {
    const system = `You are a coding agent working on repository 7. ${document(7, 2000)}`;
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "fix the failing test" }];
    const served = new Set<string | null>();
    for (let turn = 0; turn < 5; turn++) {
      const streamed = turn % 2 === 1;
      const request = { model: "agents", max_tokens: 4, system, tools, messages };
      let cached: number;
      let origin: string | null;
      if (streamed) {
        const { data: stream, response } = await client.messages
          .create({ ...request, stream: true })
          .withResponse();
        cached = -1;
        for await (const event of stream) {
          if (event.type === "message_start")
            cached = event.message.usage.cache_read_input_tokens ?? 0;
        }
        origin = response.headers.get("x-router-origin");
      } else {
        const { data, response } = await client.messages.create(request).withResponse();
        cached = data.usage.cache_read_input_tokens ?? 0;
        origin = response.headers.get("x-router-origin");
      }
      served.add(origin);
      if (turn > 0) expect(cached, `turn ${turn}`).toBeGreaterThan(2000);
      // The agent calls a tool; its result comes back in the next user turn.
      const id = `toolu_${turn}`;
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id, name: "read_file", input: { path: `src/f${turn}.ts` } }],
      });
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: document(70 + turn, 300) }],
      });
    }
    expect(served.size).toBe(1);
  });

  it("an edge-coordinated pool: the isolate's replica routes the session's turns to one origin", async () => {
    const system = `You are a coding agent working on repository 8. ${document(8, 2000)}`;
    const messages: Anthropic.MessageParam[] = [];
    const served = new Set<string | null>();
    for (let turn = 0; turn < 3; turn++) {
      messages.push({ role: "user", content: document(80 + turn, 300) });
      const { data, response } = await client.messages
        .create({ model: "agents-edge", max_tokens: 4, system, tools, messages })
        .withResponse();
      served.add(response.headers.get("x-router-origin"));
      if (turn > 0) expect(data.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(2000);
      messages.push({ role: "assistant", content: data.content });
    }
    expect(served.size).toBe(1);
  });

  it("messages.countTokens: the engine's count, through an origin of the pool", async () => {
    const count = await client.messages.countTokens({
      model: "agents",
      messages: [{ role: "user", content: document(9, 600) }],
    });
    expect(count.input_tokens).toBeGreaterThan(500);
  });
});

describe("a 30-turn agent session through /v1/messages and through /v1/chat/completions", () => {
  const TURNS = 30;
  /** The session's text: a long system prompt, then a user message per turn (`seed` apart). */
  const session = (seed: number) => ({
    system: `You are a coding agent. ${document(seed, 2000)}`,
    turn: (t: number) => document(seed + 1 + t, 150),
  });
  const fraction = (turns: { prompt: number; cached: number }[]) =>
    turns.reduce((n, t) => n + t.cached, 0) / turns.reduce((n, t) => n + t.prompt, 0);

  it("reaches the same engine-reported cached fraction (within 0.02) as the same shape of session through chat", async () => {
    const chatTurns: { prompt: number; cached: number }[] = [];
    const openai = routerClient(stack);
    const c = session(500);
    const chat: { role: "system" | "user" | "assistant"; content: string }[] = [
      { role: "system", content: c.system },
    ];
    for (let t = 0; t < TURNS; t++) {
      chat.push({ role: "user", content: c.turn(t) });
      const data = await openai.chat.completions.create({
        model: "session-chat",
        messages: chat,
        max_tokens: 4,
      });
      chatTurns.push({
        prompt: data.usage?.prompt_tokens ?? 0,
        cached: data.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      });
      chat.push({ role: "assistant", content: data.choices[0]?.message.content ?? "" });
    }
    const messageTurns: { prompt: number; cached: number }[] = [];
    const m = session(600);
    const history: Anthropic.MessageParam[] = [];
    for (let t = 0; t < TURNS; t++) {
      history.push({ role: "user", content: m.turn(t) });
      const data = await client.messages.create({
        model: "session-messages",
        system: m.system,
        messages: history,
        max_tokens: 4,
      });
      const u = data.usage;
      const cached = u.cache_read_input_tokens ?? 0;
      messageTurns.push({
        prompt: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0),
        cached,
      });
      history.push({ role: "assistant", content: data.content });
    }
    const viaChat = fraction(chatTurns);
    const viaMessages = fraction(messageTurns);
    console.log(
      `cached fraction over ${TURNS} turns: chat ${viaChat.toFixed(4)}, messages ${viaMessages.toFixed(4)}`,
    );
    expect(viaChat).toBeGreaterThan(0.8);
    expect(Math.abs(viaMessages - viaChat)).toBeLessThanOrEqual(0.02);
  });
});

describe("the SDK's typed errors for the router's answers", () => {
  it("400 BadRequestError: a message the router refuses, in Anthropic's shape", async () => {
    const error = await client.messages
      .create({
        model: "agents",
        max_tokens: 4,
        messages: [{ role: "system" as "user", content: "not a Messages role" }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });
  });

  it("404 NotFoundError: a model no pool serves", async () => {
    const error = await client.messages
      .create({
        model: "no-such-model",
        max_tokens: 4,
        messages: [{ role: "user", content: "hi" }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it("401 AuthenticationError without a valid key; x-api-key and a bearer token both work; 429 RateLimitError over the key's rate", async () => {
    const res = await fetch(`${stack.routerUrl}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
      body: JSON.stringify({ name: "claude", models: [KEYED], limits: { requestsPerMinute: 5 } }),
    });
    expect(res.status).toBe(201);
    const { key } = (await res.json()) as { key: string };
    const ask = (c: Anthropic) =>
      c.messages.create({
        model: KEYED,
        max_tokens: 2,
        messages: [{ role: "user", content: "hi" }],
      });
    const wrong = await ask(anthropic({ apiKey: "sk-ant-wrong" })).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(AuthenticationError);
    // ANTHROPIC_API_KEY sends x-api-key, ANTHROPIC_AUTH_TOKEN a bearer token: 5 a minute pass.
    for (let k = 0; k < 5; k++) {
      const auth = k % 2 === 0 ? { apiKey: key } : { authToken: key };
      expect((await ask(anthropic(auth))).type).toBe("message");
    }
    const limited = await ask(anthropic({ apiKey: key })).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(Number((limited as RateLimitError).headers?.get("retry-after"))).toBeGreaterThan(0);
  });
});
