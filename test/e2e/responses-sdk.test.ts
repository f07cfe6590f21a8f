/**
 * End to end, OpenAI Responses through the official `openai` client: wrangler dev (the real
 * Worker and Durable Objects) in front of three simulated engines that store responses in
 * their own memory, as vLLM does (tools/engine). Unstreamed and streamed `responses.create`,
 * a `previous_response_id` chain that must stay on the one engine that stored each turn (the
 * pools route round-robin, so only the pin keeps it there; in an edge pool too), later turns
 * reporting cached tokens, and the SDK's typed errors for 400, 401, 404 and 429.
 */
import { rmSync } from "node:fs";
import OpenAI, {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  RateLimitError,
} from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { e2eDir, routerClient, startE2eStack } from "./e2e-stack.ts";

const dir = e2eDir("router-responses-e2e-");
let stack: Stack;
let client: OpenAI;

const INSTRUCTIONS = "You are a coding agent working in a large TypeScript repository. ".repeat(60);

beforeAll(async () => {
  stack = await startE2eStack(dir, { origins: 3 });
  const origins = stack.originSettings();
  await stack.putSettings({
    pools: {
      agent: { origins, policy: { type: "round-robin" } },
      "agent-edge": { origins, policy: { type: "round-robin" }, coordination: "edge" },
      keyed: { origins },
    },
  });
  client = routerClient(stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("responses.create through the router", () => {
  it("unstreamed: the engine's answer and usage, with the router's headers", async () => {
    const { data, response } = await client.responses
      .create({ model: "agent", instructions: INSTRUCTIONS, input: "hello", max_output_tokens: 8 })
      .withResponse();
    expect(data.object).toBe("response");
    expect(data.id).toMatch(/^resp_/);
    expect(data.output_text.length).toBeGreaterThan(0);
    expect(data.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-router-origin")).toBeTruthy();
  });

  it("streamed: the events in order, ending with response.completed and its usage", async () => {
    const stream = await client.responses.create({
      model: "agent",
      instructions: INSTRUCTIONS,
      input: "stream please",
      max_output_tokens: 8,
      stream: true,
    });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(completed?.usage?.input_tokens).toBeGreaterThan(0);
  });

  it.each(["agent", "agent-edge"])(
    "%s: a previous_response_id chain of 8 turns lands on the engine that stored each",
    async (model) => {
      const origins: (string | null)[] = [];
      const cached: number[] = [];
      let previous: string | undefined;
      for (let t = 0; t < 8; t++) {
        const stream = t % 2 === 1;
        const body = {
          model,
          instructions: INSTRUCTIONS,
          input: `turn ${t}: read file ${t}.ts and summarise it`,
          max_output_tokens: 8,
          ...(previous ? { previous_response_id: previous } : {}),
        };
        if (stream) {
          const { data, response } = await client.responses
            .create({ ...body, stream: true })
            .withResponse();
          let done: OpenAI.Responses.Response | undefined;
          for await (const event of data)
            if (event.type === "response.completed") done = event.response;
          origins.push(response.headers.get("x-router-origin"));
          previous = done?.id;
          cached.push(done?.usage?.input_tokens_details.cached_tokens ?? 0);
        } else {
          const { data, response } = await client.responses.create(body).withResponse();
          origins.push(response.headers.get("x-router-origin"));
          previous = data.id;
          cached.push(data.usage?.input_tokens_details.cached_tokens ?? 0);
        }
      }
      expect(new Set(origins).size).toBe(1);
      // Each follow-up continues the conversation the engine holds: its prefix is cached.
      for (const c of cached.slice(1)) expect(c).toBeGreaterThan(0);
    },
  );
});

describe("the SDK's typed errors", () => {
  it("400: a bad input, and an unknown previous_response_id (OpenAI's code)", async () => {
    const bad = await client.responses
      .create({ model: "agent", input: 5 as never })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad).toMatchObject({ status: 400, param: "input" });
    const unknown = await client.responses
      .create({ model: "agent", input: "x", previous_response_id: "resp_nobody" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect(unknown).toMatchObject({
      code: "previous_response_not_found",
      param: "previous_response_id",
    });
  });

  it("404: an unknown model, and a response id no pool knows", async () => {
    const model = await client.responses
      .create({ model: "nobody", input: "x" })
      .catch((e: unknown) => e);
    expect(model).toBeInstanceOf(NotFoundError);
    expect(model).toMatchObject({ code: "model_not_found" });
    const retrieved = await client.responses.retrieve("resp_nobody").catch((e: unknown) => e);
    expect(retrieved).toBeInstanceOf(NotFoundError);
  });

  it("401 for a wrong key; 429 over the key's token budget", async () => {
    const res = await fetch(`${stack.routerUrl}/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
      body: JSON.stringify({
        name: "responses",
        models: ["keyed"],
        limits: { promptTokensPerMinute: 600 },
      }),
    });
    const { key } = (await res.json()) as { key: string };
    const keyed = (apiKey: string) =>
      new OpenAI({ baseURL: `${stack.routerUrl}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
    const wrong = await keyed(`${key.slice(0, -4)}AAAA`)
      .responses.create({ model: "keyed", input: "x" })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(AuthenticationError);
    const right = keyed(key);
    await right.responses.create({ model: "keyed", input: "x".repeat(4000), max_output_tokens: 2 });
    const limited = await right.responses
      .create({ model: "keyed", input: "again", max_output_tokens: 2 })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "tokens" });
  });
});
