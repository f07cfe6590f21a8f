/**
 * What `/v1/messages` and `/v1/responses` take from the one LLM pipeline beside chat's routing
 * (issue 22 mends, item 3): a key's prompt-token budget, spent from each API's canonical prompt
 * and refused in that API's own error shape, and admission holding a batch request behind an
 * interactive one; and `GET /v1/responses/{id}` counted against the key's request rate. The file's KV is its own: the keys made here close only their pools.
 * And the budget settled at the engine's count once the answer reports it (the estimate, bytes
 * / 4, under-charged a prompt the engine counts at 2 bytes a token by half).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import {
  admin,
  call,
  chat,
  conversation,
  drain,
  messages,
  objectState,
  origin,
  outstanding,
  pool,
  putSettings,
  releaseHeld,
  waitFor,
} from "../../test/helpers.ts";

const MSG_BUDGET = "ll-msg-budget";
const RESP_BUDGET = "ll-resp-budget";
const HELD = "ll-held";
const RESP_RPM = "ll-resp-rpm";
/** Engines counting 2 bytes a token (CJK text), and 16 (fewer tokens than the edge's 4). */
const DENSE = "ll-dense";
const SPARSE = "ll-sparse";
const FOLLOW_UP = "ll-follow-up";
const LEFT = "ll-left";
/** The prompt tokens a minute each budget key may spend. */
const PER_MINUTE = 1000;

beforeAll(async () => {
  await putSettings({
    pools: {
      [MSG_BUDGET]: pool([origin("ll-m")], { access: "keys" }),
      [RESP_BUDGET]: pool([origin("ll-r")], { access: "keys" }),
      [RESP_RPM]: pool([origin("ll-rpm")], { access: "keys" }),
      [DENSE]: pool([origin("ll-d", "bytes-per-token-2")], { access: "keys" }),
      [SPARSE]: pool([origin("ll-s", "bytes-per-token-16")], { access: "keys" }),
      [FOLLOW_UP]: pool([origin("ll-f")], { access: "keys" }),
      [LEFT]: pool([origin("ll-l", "hold")], { access: "keys" }),
      // One origin that prefills 1 token/s: once it has a request in flight, everything waits.
      [HELD]: pool([origin("ll-h", "hold")], {
        prefillTokensPerSecond: 1,
        admission: { maxWaitMs: 0, queueTimeoutMs: 30_000, maxQueued: 5 },
      }),
    },
  });
});

async function budgetKey(
  model: string,
  limits: Record<string, number> = { promptTokensPerMinute: PER_MINUTE },
): Promise<string> {
  const res = await admin("/admin/keys", {
    method: "POST",
    body: JSON.stringify({ name: `${model} agent`, models: [model], limits }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

function responses(body: Record<string, unknown>, headers: Record<string, string>) {
  return call("/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const user = (text: string) => ({ role: "user", content: text });

/** A system prompt and tool list a coding agent sends on every turn: over the whole budget. */
const SYSTEM = "Edit files with care and run the tests. ".repeat(60);
const TOOLS = [
  {
    name: "read_file",
    description: "Read a file of the repository. ".repeat(80),
    input_schema: { type: "object", properties: { path: { type: "string" } } },
  },
];

describe("a key's prompt-token budget", () => {
  it("/v1/messages spends its tools, system and turns; over budget is Anthropic's 429 rate_limit_error with retry-after", async () => {
    const key = await budgetKey(MSG_BUDGET);
    const first = { model: MSG_BUDGET, system: SYSTEM, tools: TOOLS, messages: [user("hi")] };
    // Over the budget with its tools, under it without: both the tools and the system count.
    expect(promptKey(first, 256, "messages").promptTokens).toBeGreaterThan(PER_MINUTE);
    const { tools: _, ...untooled } = first;
    expect(promptKey(untooled, 256, "messages").promptTokens).toBeLessThan(PER_MINUTE);
    const ok = await messages(first, { headers: { "x-api-key": key } });
    expect(ok.status).toBe(200);
    await ok.text();
    const refused = await messages(
      { model: MSG_BUDGET, messages: [user("hi")] },
      { headers: { "x-api-key": key } },
    );
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = (await refused.json()) as { type: string; error: { type: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

  it("/v1/responses spends its instructions and input; over budget is OpenAI's 429 with retry-after", async () => {
    const key = await budgetKey(RESP_BUDGET);
    const headers = { authorization: `Bearer ${key}` };
    const input = `Here is the file: ${"const x = 1; ".repeat(200)}`;
    const first = { model: RESP_BUDGET, instructions: SYSTEM, input, store: false };
    // Over the budget with its instructions, under it without: both count.
    expect(promptKey(first, 256, "responses").promptTokens).toBeGreaterThan(PER_MINUTE);
    const { instructions: _, ...bare } = first;
    expect(promptKey(bare, 256, "responses").promptTokens).toBeLessThan(PER_MINUTE);
    const ok = await responses(first, headers);
    expect(ok.status).toBe(200);
    await ok.text();
    const refused = await responses({ model: RESP_BUDGET, input: "hi", store: false }, headers);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({
      error: { type: "tokens", code: "rate_limit_exceeded" },
    });
  });
});

/** The engine's prompt tokens in a chat answer, JSON or SSE (its last usage). */
function promptTokensIn(text: string): number {
  const counts = [...text.matchAll(/"prompt_tokens":(\d+)/g)].map((m) => Number(m[1]));
  expect(counts.length).toBeGreaterThan(0);
  return counts.at(-1) as number;
}

describe("a key's prompt-token budget, settled at the engine's count", () => {
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const ask = (model: string, key: string, content: string, stream: boolean) =>
    chat(model, [user(content)], { stream, headers: bearer(key) });

  for (const stream of [false, true]) {
    const how = stream ? "streamed" : "unstreamed";

    it(`${how}: a key whose prompts count 2 bytes a token runs out at the engine's count, not at bytes / 4`, async () => {
      const key = await budgetKey(DENSE);
      const content = "字".repeat(800); // 2,400 bytes of UTF-8
      // The edge's estimate is within the budget; the engine's count is over it.
      const estimate = promptKey({ model: DENSE, messages: [user(content)] }).promptTokens;
      expect(estimate).toBeLessThan(PER_MINUTE * 0.65);
      const first = await ask(DENSE, key, content, stream);
      expect(first.status).toBe(200);
      const counted = promptTokensIn(await first.text());
      expect(counted).toBeGreaterThan(PER_MINUTE * 1.2);
      const refused = await ask(DENSE, key, "hi", stream);
      expect(refused.status).toBe(429);
      // In debt by the engine's count less the budget (less what refilled since).
      const retryAfterMs = Number(refused.headers.get("retry-after-ms"));
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(((counted - PER_MINUTE) * 60_000) / PER_MINUTE);
      await drain(refused);
    });

    it(`${how}: the engine counted fewer than the estimate: the rest is refunded`, async () => {
      const key = await budgetKey(SPARSE);
      const content = "x".repeat(6000);
      // Over the whole budget by the estimate (the full bucket lets it pass, into debt)...
      expect(promptKey({ model: SPARSE, messages: [user(content)] }).promptTokens).toBeGreaterThan(
        PER_MINUTE * 1.4,
      );
      const first = await ask(SPARSE, key, content, stream);
      expect(first.status).toBe(200);
      // ...but the engine counted 16 bytes a token: the key has most of its budget left.
      expect(promptTokensIn(await first.text())).toBeLessThan(PER_MINUTE * 0.4);
      const next = await ask(SPARSE, key, "x".repeat(1600), stream);
      expect(next.status).toBe(200);
      await drain(next);
    });
  }

  it("/v1/messages: a client that leaves once the engine's count has come is charged it", async () => {
    const key = await budgetKey(LEFT);
    const headers = { "x-api-key": key };
    // The prompt is a few tokens; the test origin counts the whole body, metadata included.
    const metadata = { user_id: "u".repeat(4800) };
    const body = { model: LEFT, stream: true, messages: [user("hi")], metadata };
    expect(promptKey(body, 256, "messages").promptTokens).toBeLessThan(10);
    const res = await messages(body, { headers });
    expect(res.status).toBe(200);
    // The origin sends `message_start`, with the input usage, and holds the rest.
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const start = new TextDecoder().decode((await reader.read()).value);
    const input = /"input_tokens":(\d+).*"cache_read_input_tokens":(\d+)/.exec(start);
    expect(Number(input?.[1]) + Number(input?.[2])).toBeGreaterThan(PER_MINUTE);
    await reader.cancel();
    await waitFor(async () => (await outstanding(LEFT)) === 0, 5000, "the client's leaving");
    await releaseHeld("ll-l");
    const refused = await messages({ model: LEFT, messages: [user("hi")] }, { headers });
    expect(refused.status).toBe(429);
    await drain(refused);
  });

  it("/v1/responses: a follow-up is charged the whole stored conversation the engine prefilled, as OpenAI bills it", async () => {
    const key = await budgetKey(FOLLOW_UP);
    const headers = bearer(key);
    const first = await responses({ model: FOLLOW_UP, input: "y".repeat(2400) }, headers);
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    // Its new items are a few bytes; the engine's prompt is the conversation so far, about
    // 600 tokens again: over the budget together.
    const followUp = await responses(
      { model: FOLLOW_UP, input: "and then?", previous_response_id: id },
      headers,
    );
    expect(followUp.status).toBe(200);
    const { usage } = (await followUp.json()) as { usage: { input_tokens: number } };
    expect(usage.input_tokens).toBeGreaterThan(PER_MINUTE * 0.6);
    const refused = await responses({ model: FOLLOW_UP, input: "hi", store: false }, headers);
    expect(refused.status).toBe(429);
    await drain(refused);
  });
});

describe("admission", () => {
  it("/v1/messages: a batch request waits behind an interactive one that came after it", async () => {
    // A chat request holds the origin: both messages then wait in the pool's admission.
    const holding = chat(HELD, conversation("holding", 1));
    await waitFor(async () => (await outstanding(HELD)) === 1, 5000, "the held request");
    const waiting = async () => (await objectState(HELD))?.admission?.waiting;
    const order: string[] = [];
    const send = (priority: string) =>
      messages(
        { model: HELD, messages: [user(`a ${priority} question`)] },
        { headers: { "x-router-priority": priority } },
      ).then(async (res) => {
        order.push(`${priority} ${res.status}`);
        await res.text();
      });
    const batch = send("batch");
    await waitFor(async () => (await waiting())?.batch === 1, 5000, "the batch request to wait");
    const interactive = send("interactive");
    await waitFor(async () => (await waiting())?.interactive === 1, 5000, "the interactive one");
    await releaseHeld("ll-h");
    await Promise.all([holding.then((r) => r.text()), batch, interactive]);
    expect(order).toEqual(["interactive 200", "batch 200"]);
  });
});

describe("a key's request rate", () => {
  // Issue 22 mends, item 5: GET and DELETE /v1/responses/{id} were never counted.
  it("GET /v1/responses/{id} counts against it: a 429 rate_limit_exceeded within the tier", async () => {
    const key = await budgetKey(RESP_RPM, { requestsPerMinute: 5 });
    const headers = { authorization: `Bearer ${key}` };
    // Windows are whole minutes: if one ends mid-test, the 429 comes within 11 requests anyway.
    const statuses: number[] = [];
    for (let i = 0; i < 11 && !statuses.includes(429); i++) {
      const res = await call("/v1/responses/resp_nobody", { headers });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(await res.json()).toMatchObject({
          error: { type: "requests", code: "rate_limit_exceeded" },
        });
      } else await res.text();
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.filter((s) => s === 404).length).toBeGreaterThanOrEqual(5);
  });
});
