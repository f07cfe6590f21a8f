/**
 * `POST /v1/messages` and `/v1/messages/count_tokens` through the Worker's real entry point:
 * errors in Anthropic's shape, client keys from `x-api-key`, the headers the origin gets,
 * routing by the conversation's prefix, usage learned from Anthropic's fields, P/D pools.
 * The file's KV is its own: the key made here closes only KEYED.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RequestLogLine } from "../../request-record/request-record.ts";
import { CACHED_TOKENS } from "../../test/fixture.ts";
import {
  admin,
  call,
  chat,
  messages,
  origin,
  pool,
  putSettings,
  received,
  waitFor,
} from "../../test/helpers.ts";

const MODEL = "msg-model";
const KEYED = "msg-keyed-model";
const BUSY = "msg-busy-model";
const PD = "msg-pd-model";
const FAILOVER = "msg-failover-model";
const IDLE = "msg-idle-model";

beforeAll(async () => {
  const three = [1, 2, 3].map((n) => origin(`msg-${n}`, "ok", { apiKeySecret: "TEST_ORIGIN_KEY" }));
  await putSettings({
    pools: {
      [MODEL]: pool(three, { policy: { type: "cost" }, maxBodyBytes: 64 * 1024 }),
      [KEYED]: pool([origin("msg-keyed")]),
      [BUSY]: pool([origin("msg-busy", "fail429")], { retry: { maxAttempts: 1 } }),
      [FAILOVER]: pool([origin("msg-bad", "fail500"), origin("msg-good")], {
        policy: { type: "round-robin" },
        retry: { maxAttempts: 2, backoffMs: 0 },
      }),
      [IDLE]: pool([origin("msg-idle", "stall-midstream")], { streamIdleTimeoutMs: 300 }),
      [PD]: pool([
        origin("msg-pd-p", "pd-prefill", { role: "prefill", pd: { protocol: "vllm-nixl" } }),
        origin("msg-pd-d", "pd-decode", { role: "decode", pd: { protocol: "vllm-nixl" } }),
      ]),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

interface AnthropicError {
  type: "error";
  error: { type: string; message: string };
  request_id: string;
}

/** The error's status and Anthropic type, after checking the body is Anthropic's shape alone. */
async function anthropicError(res: Response): Promise<[number, string, string]> {
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as AnthropicError;
  expect(Object.keys(body).sort()).toEqual(["error", "request_id", "type"]);
  expect(body.type).toBe("error");
  expect(Object.keys(body.error).sort()).toEqual(["message", "type"]);
  expect(body.request_id).toBe(res.headers.get("x-request-id"));
  return [res.status, body.error.type, body.error.message];
}

const user = (text: string) => ({ role: "user", content: text });
const hi = [user("hi")];

describe("bad requests get Anthropic's error shape, type and status", () => {
  it.each([
    [
      "missing max_tokens",
      { model: MODEL, messages: hi, max_tokens: undefined },
      "max_tokens: is required",
    ],
    ["missing model", { messages: hi }, "model: is required"],
    ["empty messages", { model: MODEL, messages: [] }, "messages: expected at least one message"],
    [
      "a system role in messages",
      { model: MODEL, messages: [{ role: "system", content: "x" }] },
      "messages.0.role",
    ],
    [
      "content of a wrong type",
      { model: MODEL, messages: [{ role: "user", content: 7 }] },
      "messages.0.content",
    ],
    [
      "a block without a type",
      { model: MODEL, messages: [{ role: "user", content: [{ text: "x" }] }] },
      "messages.0.content.0.type",
    ],
    [
      "a text block without text",
      { model: MODEL, messages: [{ role: "user", content: [{ type: "text" }] }] },
      "messages.0.content.0.text",
    ],
    [
      "a tool_use without input",
      {
        model: MODEL,
        messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f" }] }],
      },
      "messages.0.content.0.input",
    ],
    [
      "a system block that is not text",
      { model: MODEL, messages: hi, system: [{ type: "image" }] },
      "system.0.type",
    ],
    ["system of a wrong type", { model: MODEL, messages: hi, system: 3 }, "system"],
    [
      "a tool without a name",
      { model: MODEL, messages: hi, tools: [{ input_schema: {} }] },
      "tools.0.name",
    ],
    ["stream not a boolean", { model: MODEL, messages: hi, stream: "yes" }, "stream"],
    [
      "a router-owned field",
      { model: MODEL, messages: hi, kv_transfer_params: {} },
      "kv_transfer_params",
    ],
  ])("%s: 400 invalid_request_error naming the field", async (_, body, field) => {
    const [status, type, message] = await anthropicError(await messages(body));
    expect([status, type]).toEqual([400, "invalid_request_error"]);
    expect(message).toContain(field);
  });

  it("invalid JSON, an unknown model, a body over the limit, an unknown path", async () => {
    const raw = (body: string) =>
      call("/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    expect((await anthropicError(await raw("{not json"))).slice(0, 2)).toEqual([
      400,
      "invalid_request_error",
    ]);
    expect(
      (await anthropicError(await messages({ model: "no-such", messages: hi }))).slice(0, 2),
    ).toEqual([404, "not_found_error"]);
    const big = { model: MODEL, messages: [user("x".repeat(70 * 1024))] };
    expect((await anthropicError(await messages(big))).slice(0, 2)).toEqual([
      413,
      "request_too_large",
    ]);
    const unknown = await messages(
      { model: MODEL, messages: hi },
      { path: "/v1/messages/batches" },
    );
    expect((await anthropicError(unknown)).slice(0, 2)).toEqual([404, "not_found_error"]);
  });

  it("every origin busy: 529 overloaded_error with the origin's retry-after", async () => {
    const res = await messages({ model: BUSY, messages: hi });
    expect((await anthropicError(res.clone())).slice(0, 2)).toEqual([529, "overloaded_error"]);
    expect(res.headers.get("retry-after")).toBe("7");
  });

  it("a pool with P/D origins refuses the request (its legs speak chat only)", async () => {
    const [status, type, message] = await anthropicError(
      await messages({ model: PD, messages: hi }),
    );
    expect([status, type]).toEqual([400, "invalid_request_error"]);
    expect(message).toContain("prefill/decode");
  });

  it("the OpenAI routes keep OpenAI's shape", async () => {
    const res = await call("/v1/chat/completions", { method: "POST", body: "{not json" });
    expect(Object.keys((await res.json()) as object)).toEqual(["error"]);
  });
});

describe("forwarding", () => {
  it("the origin gets the client's bytes at /v1/messages, the anthropic-* headers, its own key and no client key", async () => {
    const body = { model: MODEL, max_tokens: 64, messages: [user("headers please")] };
    const res = await call("/v1/messages", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "prompt-caching-2024-07-31",
        "x-api-key": "sk-ant-client-secret",
        authorization: "Bearer client-secret",
      },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { type: string };
    expect(answer.type).toBe("message");
    const origin = res.headers.get("x-router-origin") as string;
    const seen = (await received(origin)).at(-1)!;
    expect(seen.path.endsWith("/v1/messages")).toBe(true);
    expect(JSON.parse(seen.body)).toEqual(body);
    expect(seen.headers["anthropic-version"]).toBe("2023-06-01");
    expect(seen.headers["anthropic-beta"]).toBe("prompt-caching-2024-07-31");
    expect(seen.headers["x-api-key"]).toBeUndefined();
    expect(seen.headers.authorization).toBe("Bearer sk-origin-secret");
  });

  it("a streamed answer passes through byte for byte", async () => {
    const res = await messages({ model: MODEL, messages: [user("stream me")], stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    expect(text.startsWith("event: message_start\n")).toBe(true);
    expect(text).toContain("café €");
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it("fails over before the first byte, as chat does", async () => {
    for (let k = 0; k < 2; k++) {
      const res = await messages({ model: FAILOVER, messages: [user(`failover ${k}`)] });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-router-origin")).toBe("msg-good");
      await res.text();
    }
  });

  it("a stream the origin stalls ends with Anthropic's error event after the idle timeout", async () => {
    const res = await messages({ model: IDLE, messages: [user("stall")], stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    const last = text.trimEnd().split("\n\n").at(-1) as string;
    expect(last.startsWith("event: error\ndata: ")).toBe(true);
    const data = JSON.parse(last.slice("event: error\ndata: ".length));
    expect(data).toEqual({
      type: "error",
      error: { type: "api_error", message: expect.any(String) },
    });
    expect(text).not.toContain("[DONE]");
  });

  it("count_tokens goes to an origin's /v1/messages/count_tokens, routed with no prompt hashes", async () => {
    const body = { model: MODEL, messages: [user("count me")] };
    const res = await call("/v1/messages/count_tokens", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(res.headers.get("x-router-matched-tokens")).toBe("0");
    const origin = res.headers.get("x-router-origin") as string;
    expect((await received(origin)).at(-1)!.path.endsWith("/v1/messages/count_tokens")).toBe(true);
  });
});

/** Every JSON request line logged while `run` goes, once `count` have been written. */
async function captured(count: number, run: () => Promise<void>): Promise<RequestLogLine[]> {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.includes('"msg":"llm_request"')) lines.push(line);
  });
  await run();
  await waitFor(() => lines.length >= count, 5000, `${count} log lines`);
  return lines.map((line) => JSON.parse(line) as RequestLogLine);
}

/** A coding agent's conversation: a long system prompt and tools, then `turns` tool rounds. */
function agentTurns(topic: string, turns: number) {
  const tools = [
    {
      name: "read_file",
      description: `reads files for ${topic}`,
      input_schema: { type: "object" },
    },
  ];
  const system = [{ type: "text", text: `You are a coding agent for ${topic}. `.repeat(100) }];
  const history: unknown[] = [user(`fix the bug in ${topic}`)];
  for (let t = 0; t < turns; t++) {
    history.push({
      role: "assistant",
      content: [
        { type: "tool_use", id: `toolu_${t}`, name: "read_file", input: { path: `f${t}.ts` } },
      ],
    });
    history.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `toolu_${t}`, content: `contents of f${t}.ts` },
      ],
    });
  }
  return { model: MODEL, system, tools, messages: history };
}

describe("routing and learning", () => {
  it("later turns of a conversation land on its origin, believed to hold its prefix", async () => {
    const first = await messages(agentTurns("routing", 0));
    expect(first.status).toBe(200);
    await first.text();
    const home = first.headers.get("x-router-origin");
    for (let turns = 1; turns <= 4; turns++) {
      const next = await messages(agentTurns("routing", turns));
      expect(next.status).toBe(200);
      await next.text();
      expect(next.headers.get("x-router-origin")).toBe(home);
      expect(Number(next.headers.get("x-router-matched-tokens"))).toBeGreaterThan(0);
    }
  });

  it("a text conversation keys alike through chat and Messages: its Messages turn lands where its chat turn ran", async () => {
    const system = "You review pull requests for the billing service. ".repeat(60);
    const first = await chat(MODEL, [{ role: "system", content: system }, user("review #1")]);
    expect(first.status).toBe(200);
    await first.text();
    const next = await messages({
      model: MODEL,
      system,
      messages: [user("review #1"), { role: "assistant", content: "looks good" }, user("and #2?")],
    });
    expect(next.status).toBe(200);
    await next.text();
    expect(next.headers.get("x-router-origin")).toBe(first.headers.get("x-router-origin"));
    expect(Number(next.headers.get("x-router-matched-tokens"))).toBeGreaterThan(500);
  });

  it("usage from Anthropic's fields, streamed and not: prompt = input + cache reads, with an api label", async () => {
    const sent: number[] = [];
    const lines = await captured(2, async () => {
      for (const stream of [false, true]) {
        const body = { ...agentTurns(`usage-${stream}`, 1), max_tokens: 64, stream };
        sent.push(JSON.stringify(body).length);
        const res = await messages(body);
        expect(res.status).toBe(200);
        await res.text();
      }
    });
    expect(lines).toHaveLength(2);
    for (const [i, line] of lines.entries()) {
      expect(line).toMatchObject({ api: "messages", outcome: "ok", cachedTokens: CACHED_TOKENS });
      // The test origin reports ceil(bytes / 4) prompt tokens, CACHED_TOKENS of them cached.
      expect(line.promptTokens).toBe(Math.ceil(sent[i]! / 4));
    }
  });
});

describe("client keys", () => {
  it("a pool that needs a key takes it from x-api-key as from Authorization; a wrong one is a 401 authentication_error", async () => {
    const created = await admin("/admin/keys", {
      method: "POST",
      body: JSON.stringify({ name: "claude-code", models: [KEYED] }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const body = { model: KEYED, messages: hi };
    const none = await messages(body);
    expect((await anthropicError(none)).slice(0, 2)).toEqual([401, "authentication_error"]);
    const wrong = await messages(body, { headers: { "x-api-key": "sk-wrong" } });
    expect((await anthropicError(wrong)).slice(0, 2)).toEqual([401, "authentication_error"]);
    const presented: Record<string, string>[] = [
      { "x-api-key": key },
      { authorization: `Bearer ${key}` },
    ];
    for (const headers of presented) {
      const res = await messages(body, { headers });
      expect(res.status).toBe(200);
      await res.text();
    }
    const seen = (await received("msg-keyed")).at(-1)!;
    expect(seen.headers["x-api-key"]).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
  });

  // Issue 22 mends, item 2 (the key above closes KEYED): the 401 named only `Authorization:
  // Bearer`, which Anthropic's clients do not send.
  it("a missing key's 401 names x-api-key, where Anthropic's clients send it", async () => {
    const res = await messages({ model: KEYED, messages: hi });
    const [status, type, message] = await anthropicError(res);
    expect([status, type]).toEqual([401, "authentication_error"]);
    expect(message).toMatch(/'x-api-key: <key>'/);
    expect(message).toMatch(/Authorization: Bearer/);
  });
});
