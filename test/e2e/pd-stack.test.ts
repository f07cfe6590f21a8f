/**
 * End to end, disaggregated: the official `openai` client against wrangler dev (the real Worker
 * and Durable Object) in front of simulated engines that speak vLLM's NIXL protocol and SGLang's
 * bootstrap protocol (tools/engine/pd/), over real sockets: the prefill engines' private
 * channels are dialled by the decode engines, never by the router.
 */
import { rmSync } from "node:fs";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouterStats } from "../../src/core/router/router-types.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { promptText } from "../../tools/replay/prompt-text.ts";
import { e2eDir, routerClient, startE2eStack } from "./e2e-stack.ts";

const dir = e2eDir("router-pd-e2e-");
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startE2eStack(dir, {
    origins: 0,
    engines: [
      { id: "vllm-prefill", pd: { protocol: "vllm-nixl", role: "prefill" } },
      { id: "vllm-decode", pd: { protocol: "vllm-nixl", role: "decode" } },
      { id: "sglang-prefill", pd: { protocol: "sglang", role: "prefill" } },
      { id: "sglang-decode", pd: { protocol: "sglang", role: "decode" } },
    ],
  });
  await stack.putSettings({
    pools: {
      "pd-vllm": {
        origins: stack.originSettings(["vllm-prefill", "vllm-decode"]),
        disaggregation: { minUncachedTokens: 512 },
      },
      "pd-sglang": {
        origins: stack.originSettings(["sglang-prefill", "sglang-decode"]),
        disaggregation: { minUncachedTokens: 0, prefillBusyMs: 3_600_000 },
      },
    },
  });
  client = routerClient(stack);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function state(model: string): Promise<RouterStats> {
  const res = await fetch(`${stack.routerUrl}/admin/state?model=${model}`, {
    headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
  });
  return ((await res.json()) as { object: { router: RouterStats } }).object.router;
}

async function settled(model: string): Promise<RouterStats> {
  for (let i = 0; i < 100; i++) {
    const s = await state(model);
    if (s.outstanding === 0) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${model}: requests still outstanding`);
}

const document = (id: number, tokens: number) =>
  promptText(
    Array.from({ length: Math.ceil(tokens / 512) }, (_, i) => id * 1000 + i),
    tokens,
  );

const first = { role: "user" as const, content: document(1, 3000) };
/** The conversation's next turn: a long new message, so it is worth a remote prefill again. */
const longTurn = [
  first,
  { role: "assistant" as const, content: "ok" },
  { role: "user" as const, content: document(3, 1500) },
];

describe("P/D through the local router, with the openai client", () => {
  it("vllm-nixl: the prefill engine prefills, the decode engine pulls the KV and answers", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "pd-vllm", messages: [first], max_tokens: 6 })
      .withResponse();
    expect(response.headers.get("x-router-pd")).toBe("remote");
    expect(response.headers.get("x-router-origin")).toBe("vllm-decode");
    expect(response.headers.get("x-router-prefill-origin")).toBe("vllm-prefill");
    expect(data.choices[0]?.message.content?.split(" ").filter(Boolean)).toHaveLength(6);
    // The decode engine counts the KV it pulled as cached, as vLLM does: the client sees that.
    const usage = data.usage;
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe((usage?.prompt_tokens ?? 0) - 1);
    // The prefill engine missed (vLLM then reports no cached_tokens): nothing to learn, and
    // the decode engine's count is not taken for a hit.
    const s = await settled("pd-vllm");
    expect(s.pd.byReason["pd:remote"]).toBe(1);
    expect(s.accuracy.reports).toBe(0);
  });

  it("vllm-nixl: the index learns the prefill engine's hit, not the decode engine's count", async () => {
    const { data } = await client.chat.completions
      .create({ model: "pd-vllm", messages: longTurn, max_tokens: 4 })
      .withResponse();
    const decodeCount = data.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(decodeCount).toBe((data.usage?.prompt_tokens ?? 0) - 1);
    const s = await settled("pd-vllm");
    expect(s.pd.byReason["pd:remote"]).toBe(2);
    expect(s.accuracy.reports).toBe(1);
    // The prefill engine held the first turn: about 3000 tokens of this prompt, not all of it.
    expect(s.accuracy.cachedTokens).toBeGreaterThan(2500);
    expect(s.accuracy.cachedTokens).toBeLessThan(decodeCount - 1000);
  });

  it("vllm-nixl: a short next turn stays on the decode engine that holds the conversation", async () => {
    const stream = await client.chat.completions.create({
      model: "pd-vllm",
      messages: [
        ...longTurn,
        { role: "assistant", content: "ok" },
        { role: "user", content: "more" },
      ],
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let cached = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached;
    }
    expect(text.split(" ").filter(Boolean)).toHaveLength(4);
    // Its KV arrived with the earlier turns and stayed in its prefix cache.
    expect(cached).toBeGreaterThan(4000);
    expect((await settled("pd-vllm")).pd.byReason["pd:local-cached"]).toBe(1);
  });

  it("sglang: both legs meet in a bootstrap room; the decode leg streams to the client", async () => {
    const ask = async (messages: OpenAI.ChatCompletionMessageParam[]) => {
      const { data, response } = await client.chat.completions
        .create({
          model: "pd-sglang",
          messages,
          max_tokens: 5,
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      expect(response.headers.get("x-router-pd")).toBe("remote");
      expect(response.headers.get("x-router-prefill-origin")).toBe("sglang-prefill");
      let chunks = 0;
      let cached = 0;
      for await (const chunk of data) {
        if (chunk.choices[0]?.delta.content) chunks++;
        cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached;
      }
      expect(chunks).toBeGreaterThan(0);
      return cached;
    };
    expect(await ask([first])).toBe(0);
    // SGLang's decode reports its prefill's hit, which is what the index learns.
    const cached = await ask(longTurn);
    expect(cached).toBeGreaterThan(2500);
    const s = await settled("pd-sglang");
    expect(s.pd.byReason["pd:remote"]).toBe(2);
    expect(s.pd.prefillFailed).toBe(0);
    expect(s.accuracy).toMatchObject({ reports: 1, cachedTokens: cached });
  });
});
