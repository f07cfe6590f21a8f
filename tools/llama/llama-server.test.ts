/**
 * The project's random model on the real llama-server (skipped, saying why, when none is found
 * through LLAMA_SERVER or PATH): it loads, tokenizes one token per byte with the chatml tokens
 * as specials, answers a chat completion, reports cached tokens on a repeated prompt, and comes
 * back from a kill with an empty cache on the same port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findLlamaServer, type LlamaServer, startLlamaServer } from "./llama-server.ts";
import { ensureModel } from "./model.ts";
import { SPECIAL_TOKENS, VOCAB_BYTES } from "./random-model.ts";

const found = findLlamaServer();
if ("missing" in found) console.warn(`llama-server tests skipped: ${found.missing}`);

const dir = mkdtempSync(join(tmpdir(), "llama-model-"));
let server: LlamaServer | undefined;

beforeAll(async () => {
  if ("missing" in found) return;
  const model = await ensureModel({ size: "tiny", dir });
  server = await startLlamaServer({
    binary: found.path,
    model,
    id: "tiny",
    ctxTokens: 4096,
    cacheRamMiB: 16,
  });
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server?.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const chat = (content: string) =>
  post("/v1/chat/completions", {
    messages: [{ role: "user", content }],
    max_tokens: 8,
  }) as Promise<{
    usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
  }>;

describe("findLlamaServer", () => {
  it("names what it looked for when it finds nothing", () => {
    const saved = { LLAMA_SERVER: process.env.LLAMA_SERVER, PATH: process.env.PATH };
    try {
      process.env.LLAMA_SERVER = join(dir, "no-such-server");
      expect(findLlamaServer()).toEqual({
        missing: `LLAMA_SERVER=${join(dir, "no-such-server")} is not an executable file`,
      });
      delete process.env.LLAMA_SERVER;
      process.env.PATH = dir;
      expect(findLlamaServer()).toEqual({
        missing: "no llama-server: LLAMA_SERVER is unset and PATH has none",
      });
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});

describe.skipIf("missing" in found)("the random model on llama-server", () => {
  it("tokenizes every vocabulary byte as one token, the chatml tokens as one each", async () => {
    const text = String.fromCharCode(...VOCAB_BYTES);
    const { tokens } = (await post("/tokenize", { content: text })) as { tokens: number[] };
    expect(tokens).toEqual(VOCAB_BYTES.map((_, i) => i));
    const special = (await post("/tokenize", {
      content: SPECIAL_TOKENS.join(""),
      parse_special: true,
    })) as { tokens: number[] };
    expect(special.tokens).toEqual(SPECIAL_TOKENS.map((_, i) => VOCAB_BYTES.length + i));
  });

  it("answers chat completions through its chatml template and reports a repeated prompt cached", async () => {
    const question = "What does a router do with a prompt? ".repeat(20);
    const first = await chat(question);
    // <|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n: 3 specials, bytes otherwise.
    expect(first.usage.prompt_tokens).toBe(3 + `user\n${question}\nassistant\n`.length);
    expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const again = await chat(question);
    expect(again.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(question.length);
  });

  it("comes back on the same port with an empty cache after a kill", async () => {
    const question = "A prompt to forget. ".repeat(20);
    await chat(question);
    server?.kill();
    await expect(fetch(`${server?.url}/health`)).rejects.toThrow();
    await server?.restart();
    const after = await chat(question);
    expect(after.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });
});
