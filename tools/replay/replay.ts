/**
 * Sends trace requests through the router over real HTTP with the official `openai` client,
 * each at its scheduled time, streaming with usage, and records what the client saw: which
 * origin served it (`x-router-origin`), time to first token, prompt and cached tokens.
 */
import OpenAI from "openai";

export interface ReplayRequest {
  /** Send time, wall ms after the replay starts. */
  atMs: number;
  model: string;
  text: string;
  maxTokens: number;
}

export interface ReplayResult {
  ok: boolean;
  origin: string | null;
  reason: string | null;
  ttftMs: number | null;
  promptTokens: number;
  cachedTokens: number;
  /** Output tokens the engine reported (usage), 0 when it reported none. */
  completionTokens: number;
  error?: string;
}

async function one(client: OpenAI, r: ReplayRequest): Promise<ReplayResult> {
  const started = performance.now();
  try {
    const { data, response } = await client.chat.completions
      .create({
        model: r.model,
        messages: [{ role: "user", content: r.text }],
        max_tokens: r.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let ttftMs: number | null = null;
    let promptTokens = 0;
    let cachedTokens = 0;
    let completionTokens = 0;
    for await (const chunk of data) {
      if (ttftMs === null && chunk.choices.length > 0) ttftMs = performance.now() - started;
      if (chunk.usage) {
        promptTokens = chunk.usage.prompt_tokens;
        cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
        completionTokens = chunk.usage.completion_tokens;
      }
    }
    const origin = response.headers.get("x-router-origin");
    return {
      ok: true,
      origin,
      reason: response.headers.get("x-router-reason"),
      ttftMs,
      promptTokens,
      cachedTokens,
      completionTokens,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      origin: null,
      reason: null,
      ttftMs: null,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      error: message,
    };
  }
}

/** `apiKey`: a client key for pools that need one (tools/start/replay-key.ts); open pools ignore it. */
export async function replay(
  routerUrl: string,
  requests: readonly ReplayRequest[],
  onResult: (done: number) => void = () => {},
  apiKey = "local",
): Promise<ReplayResult[]> {
  const client = new OpenAI({
    baseURL: `${routerUrl}/v1`,
    apiKey,
    maxRetries: 0,
    timeout: 120_000,
  });
  const start = performance.now();
  let done = 0;
  return Promise.all(
    requests.map(async (r) => {
      const wait = r.atMs - (performance.now() - start);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const result = await one(client, r);
      onResult(++done);
      return result;
    }),
  );
}
