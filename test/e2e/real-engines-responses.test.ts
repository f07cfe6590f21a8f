/**
 * End to end on real engines, OpenAI Responses: the Worker under `wrangler dev` in front of two
 * llama.cpp servers (the project's tiny random model, tools/llama), read with the official
 * `openai` client. The target of issue 22: an agent session of 30 turns through
 * `/v1/responses` reaches the same engine-reported cached fraction as the same conversation
 * through `/v1/chat/completions` (within 0.02), because each turn is hashed as the engine
 * renders it and lands where the previous turn is cached. llama.cpp's server stores no
 * responses (no `previous_response_id`), so each turn sends the whole history, as the Codex CLI
 * does. Skipped, saying why, when no llama-server is found (LLAMA_SERVER or PATH).
 */
import { rmSync } from "node:fs";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findLlamaServer } from "../../tools/llama/llama-server.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { promptText } from "../../tools/replay/prompt-text.ts";
import { e2eDir, routerClient } from "./e2e-stack.ts";
import { type LlamaStack, startLlamaStack } from "./llama-stack.ts";

const MODEL = "real-agent";
const TURNS = 30;
const found = findLlamaServer();
if ("missing" in found) console.warn(`real-engine Responses test skipped: ${found.missing}`);

const dir = e2eDir("router-real-responses-e2e-");
let llama: LlamaStack | undefined;
let stack: Stack | undefined;
let client: OpenAI;

beforeAll(async () => {
  if ("missing" in found) return;
  llama = await startLlamaStack(found.path, dir, ["llama-r1", "llama-r2"], MODEL);
  ({ stack } = llama);
  client = routerClient(stack);
}, 90_000);

afterAll(async () => {
  await llama?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `bytes` of text (one token per byte on these engines). */
const text = (id: number, bytes: number) => promptText([id, id + 1], bytes / 4);

/** A session: long instructions, then turns of varied size, each answered by a fixed reply. */
function session(seed: number) {
  const instructions = text(seed, 1600);
  const turns = Array.from({ length: TURNS }, (_, t) => ({
    user: text(seed + 10 + t, 80 + ((t * 37) % 120)),
    assistant: text(seed + 500 + t, 40),
  }));
  return { instructions, turns };
}

interface Turn {
  origin: string;
  prompt: number;
  cached: number;
}

/** The engine-reported cached fraction of a session's turns: cached over prompt tokens. */
function fraction(turns: readonly Turn[]): number {
  const sum = (f: (t: Turn) => number) => turns.reduce((n, t) => n + f(t), 0);
  return sum((t) => t.cached) / sum((t) => t.prompt);
}

async function throughChat(seed: number): Promise<Turn[]> {
  const { instructions, turns } = session(seed);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: instructions },
  ];
  const out: Turn[] = [];
  for (const turn of turns) {
    messages.push({ role: "user", content: turn.user });
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages, max_tokens: 2 })
      .withResponse();
    out.push({
      origin: response.headers.get("x-router-origin") ?? "",
      prompt: data.usage?.prompt_tokens ?? 0,
      cached: data.usage?.prompt_tokens_details?.cached_tokens ?? 0,
    });
    messages.push({ role: "assistant", content: turn.assistant });
  }
  return out;
}

async function throughResponses(seed: number): Promise<Turn[]> {
  const { instructions, turns } = session(seed);
  const input: OpenAI.Responses.ResponseInputItem[] = [];
  const out: Turn[] = [];
  for (const turn of turns) {
    // llama.cpp's server wants each item's `type`, as the Codex CLI sends it.
    input.push({ type: "message", role: "user", content: turn.user });
    const { data, response } = await client.responses
      .create({ model: MODEL, instructions, input, max_output_tokens: 2, store: false })
      .withResponse();
    out.push({
      origin: response.headers.get("x-router-origin") ?? "",
      prompt: data.usage?.input_tokens ?? 0,
      cached: data.usage?.input_tokens_details.cached_tokens ?? 0,
    });
    input.push({
      type: "message",
      role: "assistant",
      id: `msg_${out.length}`,
      status: "completed",
      content: [{ type: "output_text", text: turn.assistant, annotations: [] }],
    });
  }
  return out;
}

describe.skipIf("missing" in found)("a 30-turn agent session on real llama-servers", () => {
  it("reaches the same cached fraction through /v1/responses as through chat (within 0.02)", async () => {
    const chat = await throughChat(1000);
    const responses = await throughResponses(5000);
    for (const turns of [chat, responses]) {
      expect(new Set(turns.map((t) => t.origin)).size).toBe(1);
      expect(turns.every((t) => t.prompt > 0)).toBe(true);
    }
    const [c, r] = [fraction(chat), fraction(responses)];
    console.log(
      `cached fraction over ${TURNS} turns: chat ${c.toFixed(4)}, responses ${r.toFixed(4)}`,
    );
    expect(c).toBeGreaterThan(0.5);
    expect(Math.abs(r - c)).toBeLessThanOrEqual(0.02);
  }, 300_000);
});
