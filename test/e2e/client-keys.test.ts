/**
 * End to end, client keys: the official `openai` client against wrangler dev (the real Worker,
 * local KV and the rate-limiting bindings as wrangler runs them) in front of a simulated
 * engine. What a user's code sees: its SDK's own error classes for a wrong key, a model the key
 * may not use and a limit, and a 429 the SDK waits out (`retry-after-ms`) and retries by itself.
 * Last, what `npm start` does once a key has named `"*"` in its local state, and the documented
 * command that reopens a pool there.
 */
import { execSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import OpenAI, { AuthenticationError, PermissionDeniedError, RateLimitError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { replay } from "../../tools/replay/replay.ts";
import { poolsNeedingKey, reopenCommand, replayKey } from "../../tools/start/replay-key.ts";
import { e2eDir, startE2eStack } from "./e2e-stack.ts";

const dir = e2eDir("router-keys-e2e-");
const MODEL = "keyed";
const PER_MINUTE = 600;
let stack: Stack;

beforeAll(async () => {
  stack = await startE2eStack(dir, {
    origins: 1,
  });
  const origins = stack.originSettings();
  await stack.putSettings({ pools: { [MODEL]: { origins }, unlisted: { origins } } });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function createKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await fetch(`${stack.routerUrl}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; key: string };
}

/** A client that records the status of every HTTP response it gets, retries included. */
function client(apiKey: string, maxRetries: number) {
  const statuses: number[] = [];
  const openai = new OpenAI({
    baseURL: `${stack.routerUrl}/v1`,
    apiKey,
    maxRetries,
    timeout: 30_000,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      statuses.push(res.status);
      return res;
    },
  });
  return { openai, statuses };
}

/** User text whose prompt the edge estimates at exactly `tokens`. */
function promptOf(tokens: number): string {
  let content = "x".repeat(tokens * 4);
  const estimate = (text: string) =>
    promptKey({ model: MODEL, messages: [{ role: "user", content: text }] }).promptTokens;
  while (estimate(content) > tokens) content = content.slice(0, -1);
  expect(estimate(content)).toBe(tokens);
  return content;
}

describe("client keys through the openai client", () => {
  it("a wrong key and a model the key may not use: the SDK's own errors, OpenAI's codes", async () => {
    const { key } = await createKey({ name: "e2e", models: [MODEL] });
    // Another team's key makes `unlisted` need a key too (a pool no key names stays open).
    await createKey({ name: "other team", models: ["unlisted"] });
    const wrong = client(`${key.slice(0, -4)}AAAA`, 2);
    const denied = await wrong.openai.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AuthenticationError);
    expect(denied).toMatchObject({
      status: 401,
      code: "invalid_api_key",
      type: "invalid_request_error",
    });
    expect(wrong.statuses).toEqual([401]);

    const right = client(key, 2);
    const other = await right.openai.chat.completions
      .create({ model: "unlisted", messages: [{ role: "user", content: "hi" }], max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(PermissionDeniedError);
    expect(other).toMatchObject({ status: 403, code: "model_not_allowed", param: "model" });
    const models = await right.openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
  });

  it("over the token budget: a 429 the SDK honours (retry-after-ms), then the answer", async () => {
    // 600 tokens a minute refill at 10 a second; a first prompt 30 tokens over the budget
    // passes (the bucket was full) and leaves 3 s of debt for the next request to wait.
    const { key } = await createKey({
      name: "budget",
      models: [MODEL],
      limits: { promptTokensPerMinute: PER_MINUTE },
    });
    const { openai, statuses } = client(key, 2);
    await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: promptOf(PER_MINUTE + 30) }],
      max_tokens: 2,
    });
    const started = Date.now();
    const { data, response } = await openai.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "and now?" }], max_tokens: 2 })
      .withResponse();
    const waited = Date.now() - started;
    expect(statuses).toEqual([200, 429, 200]);
    expect(response.status).toBe(200);
    expect(data.choices[0]?.message.content).toBeTruthy();
    // It waited for the router's retry-after-ms (3 s less the first answer's time), not its
    // own first backoff (0.5 s).
    expect(waited).toBeGreaterThanOrEqual(2000);
  });

  it("without retries the SDK raises the 429 as OpenAI's: type `tokens`, rate_limit_exceeded", async () => {
    const { key } = await createKey({
      name: "budget, no retries",
      models: [MODEL],
      limits: { promptTokensPerMinute: PER_MINUTE },
    });
    const once = client(key, 0);
    await once.openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: promptOf(PER_MINUTE * 2) }],
      max_tokens: 2,
    });
    const limited = await once.openai.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "again" }], max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "tokens" });
    const headers = (limited as RateLimitError).headers;
    expect(Number(headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("over the request rate: the tier's binding as wrangler dev runs it answers 429", async () => {
    const { key } = await createKey({
      name: "rpm",
      models: [MODEL],
      limits: { requestsPerMinute: 5 },
    });
    const { openai, statuses } = client(key, 0);
    // Windows are whole minutes: if one ends mid-test, the 429 comes within 11 requests anyway.
    let limited: unknown = null;
    for (let i = 0; i < 11 && limited === null; i++) {
      await openai.chat.completions
        .create({ model: MODEL, messages: [{ role: "user", content: `q${i}` }], max_tokens: 1 })
        .catch((e: unknown) => {
          limited = e;
        });
    }
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "requests" });
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
  });
});

describe('issue 24: after a key named "*", every later npm start failed each request with a 401', () => {
  const hiTo = (model: string) => ({ atMs: 0, model, text: "hi", maxTokens: 2 });

  it("the replay makes a key of its own for the pools that need one, says why, and succeeds", async () => {
    await createKey({ name: "everything", models: ["*"] });
    const models = [MODEL, "unlisted"];
    expect(await poolsNeedingKey(stack.routerUrl, models)).toEqual(models);
    const keyless = await replay(stack.routerUrl, models.map(hiTo));
    expect(keyless.map((r) => r.ok)).toEqual([false, false]);
    const key = await replayKey(stack, models, join(dir, "state"));
    expect(key.note).toMatch(/need a client key here: keyed, unlisted .*wrangler kv key delete/);
    const results = await replay(stack.routerUrl, models.map(hiTo), undefined, key.apiKey);
    expect(results.map((r) => [r.ok, r.error])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    await key.revoke();
  });

  it("the documented local command reopens a pool in wrangler dev's state", async () => {
    await stack.stop();
    execSync(reopenCommand(join(dir, "state"), "*"), {
      cwd: resolve(import.meta.dirname, "../.."),
      env: { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false" },
      stdio: "pipe",
    });
    stack = await startE2eStack(dir, { origins: 1 });
    const origins = stack.originSettings();
    await stack.putSettings({ pools: { [MODEL]: { origins }, fresh: { origins } } });
    // `fresh` was closed only by "*"; `keyed` stays closed by its own keys' marker.
    expect(await poolsNeedingKey(stack.routerUrl, [MODEL, "fresh"])).toEqual([MODEL]);
    const [open] = await replay(stack.routerUrl, [hiTo("fresh")]);
    expect(open?.error).toBeUndefined();
  }, 120_000);
});
