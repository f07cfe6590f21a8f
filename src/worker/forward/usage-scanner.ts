/**
 * Finds the final `usage` of an answer in its bytes as they pass, without holding the stream:
 * the engine's count of the whole prompt and of its cached part, the truth the router corrects
 * its index with, in the format of whichever API answered (told apart by field names, so the
 * forwarding path needs no API of its own):
 *
 * - chat and completions: `usage.prompt_tokens` and `usage.prompt_tokens_details.cached_tokens`
 *   (vLLM, SGLang and llama.cpp report the latter);
 * - OpenAI Responses: `usage.input_tokens` (the whole prompt) and
 *   `usage.input_tokens_details.cached_tokens`; streamed, in `response.completed`'s
 *   `response.usage`. llama.cpp's server (observed): unstreamed `"usage":{"input_tokens":1336,
 *   "output_tokens":8,"total_tokens":1344,"input_tokens_details":{"cached_tokens":1335}}`, the
 *   same object in `response.completed`, none in `response.created`;
 * - Anthropic Messages: `usage.input_tokens` counts only the prompt tokens neither read from nor
 *   written to the cache, so the whole prompt is `input_tokens + cache_read_input_tokens +
 *   cache_creation_input_tokens` and the cached part `cache_read_input_tokens`. Streamed, the
 *   usage is split: `message_start`'s `message.usage` holds the input side, `message_delta`'s
 *   `usage` the cumulative counts so far (Anthropic: its input fields optional), which update the
 *   fields they carry. llama.cpp (observed): unstreamed `"usage":{"cache_read_input_tokens":1335,
 *   "input_tokens":1,"output_tokens":8}` (no `cache_creation_input_tokens`); streamed, the same
 *   fields in `message_start` (`output_tokens` 0) and `{"output_tokens":8}` in `message_delta`.
 *   vLLM (`vllm/entrypoints/anthropic/serving.py`) reports `input_tokens` as the whole prompt
 *   and no cache fields, in the answer and in both events: read as the whole prompt, with no
 *   cached count (its chat and Responses answers carry that);
 *
 * A Responses answer's `id` is captured too (`Usage.responseId`): unstreamed, the top-level `id`
 * of an object whose `object` is "response"; streamed, `response.id` of `response.created` (and
 * of the events after it). An engine that stores responses (vLLM) answers a follow-up naming it
 * in `previous_response_id` only itself, so the Worker remembers which origin answered it (a
 * request with `store: false` is answered with an id too, which no engine keeps).
 *
 * - SSE (`text/event-stream`): each `data:` line is one JSON event; only lines mentioning
 *   "usage" or "response.created" are parsed, so the cost per token is a substring search, not a
 *   JSON parse. The last usage wins (vLLM with `continuous_usage_stats` repeats it on every
 *   chunk), but for `message_delta`'s, which update the fields they carry. A line longer than
 *   MAX_LINE_CHARS is skipped: a Responses answer of over a million characters loses its usage.
 * - JSON: the body is kept up to MAX_JSON_CHARS (UTF-16 units) and parsed at the end; a larger
 *   body has no usage we can afford to find, and the outcome goes without it.
 */

export interface Usage {
  /** The whole prompt, cached part included, in engine tokens. */
  promptTokens?: number;
  /** The part of the prompt the engine read from its cache. */
  cachedTokens?: number;
  /** A Responses answer's id (`resp_...`), which an engine storing responses alone can continue. */
  responseId?: string;
}

export type ScanMode = "sse" | "json" | "none";

const MAX_JSON_CHARS = 8 * 1024 * 1024;
/** A longer SSE line (a base64 image, say) is skipped rather than buffered without bound. */
export const MAX_LINE_CHARS = 1024 * 1024;

export function scanModeOf(contentType: string | null): ScanMode {
  const type = (contentType ?? "").toLowerCase();
  if (type.includes("text/event-stream")) return "sse";
  if (type.includes("json")) return "json";
  return "none";
}

/** The usage counts an answer or event reported, by the names each API gives them. */
interface Reported {
  /** chat, completions: the whole prompt. */
  prompt?: number;
  /** Responses: the whole prompt; Messages: its part neither read from nor written to cache. */
  input?: number;
  /** chat's `prompt_tokens_details` or Responses' `input_tokens_details`. */
  cached?: number;
  /** Messages. */
  cacheRead?: number;
  cacheCreation?: number;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null;
const count = (value: unknown): number | undefined =>
  typeof value === "number" ? value : undefined;

/** An answer's `usage`, or a streamed event's: top level, `message_start`'s or a `response.*`'s. */
function usageObject(value: Json): Json | null {
  if (isObject(value.usage)) return value.usage;
  for (const inner of [value.message, value.response]) {
    if (isObject(inner) && isObject(inner.usage)) return inner.usage;
  }
  return null;
}

/** The counts `value` carries (fields it lacks stay undefined), or null without a usage. */
function reportedOf(value: unknown): Reported | null {
  if (!isObject(value)) return null;
  const u = usageObject(value);
  if (!u) return null;
  const details = isObject(u.prompt_tokens_details)
    ? u.prompt_tokens_details
    : u.input_tokens_details;
  const all: Reported = {
    prompt: count(u.prompt_tokens),
    input: count(u.input_tokens),
    cached: isObject(details) ? count(details.cached_tokens) : undefined,
    cacheRead: count(u.cache_read_input_tokens),
    cacheCreation: count(u.cache_creation_input_tokens),
  };
  const out: Reported = {};
  for (const [field, n] of Object.entries(all) as [keyof Reported, number | undefined][]) {
    if (n !== undefined) out[field] = n;
  }
  return out;
}

/** The router's usage from the counts of whichever API reported them. */
function usageFrom(r: Reported): Usage {
  const out: Usage = {};
  const anthropic = r.cacheRead !== undefined || r.cacheCreation !== undefined;
  if (r.prompt !== undefined) out.promptTokens = r.prompt;
  else if (r.input !== undefined) {
    out.promptTokens = anthropic ? r.input + (r.cacheRead ?? 0) + (r.cacheCreation ?? 0) : r.input;
  }
  const cached = anthropic ? (r.cacheRead ?? 0) : r.cached;
  if (cached !== undefined) out.cachedTokens = cached;
  return out;
}

/** The usage of an answer (or streamed event), in any of the three APIs, if it has one. */
export function usageOf(value: unknown): Usage | null {
  const reported = reportedOf(value);
  return reported ? usageFrom(reported) : null;
}

/** A Responses answer's id: its own, or a streamed event's `response.id`. */
function responseIdOf(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  if (value.object === "response" && typeof value.id === "string") return value.id;
  const inner = value.response;
  return isObject(inner) && typeof inner.id === "string" ? inner.id : undefined;
}

export class UsageScanner {
  readonly #mode: ScanMode;
  readonly #decoder = new TextDecoder();
  #text = "";
  #skipLine = false;
  #overflow = false;
  #reported: Reported = {};
  #responseId: string | undefined;

  constructor(mode: ScanMode) {
    this.#mode = mode;
  }

  push(bytes: Uint8Array): void {
    if (this.#mode === "none" || this.#overflow) return;
    const text = this.#decoder.decode(bytes, { stream: true });
    if (this.#mode === "json") {
      this.#text += text;
      if (this.#text.length > MAX_JSON_CHARS) {
        this.#overflow = true;
        this.#text = "";
      }
      return;
    }
    this.#lines(text);
  }

  #lines(text: string): void {
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      const line = this.#text + text.slice(start, nl);
      this.#text = "";
      if (!this.#skipLine) this.#line(line);
      this.#skipLine = false;
      start = nl + 1;
    }
    if (this.#skipLine) return;
    this.#text += text.slice(start);
    if (this.#text.length > MAX_LINE_CHARS) {
      this.#text = "";
      this.#skipLine = true;
    }
  }

  #line(line: string): void {
    if (!line.startsWith("data:")) return;
    if (!line.includes('"usage"') && !line.includes('"response.created"')) return;
    let event: unknown;
    try {
      event = JSON.parse(line.slice(5));
    } catch {
      return; // Not JSON (a `[DONE]` marker or a foreign event): nothing to learn.
    }
    this.#responseId ??= responseIdOf(event);
    const reported = reportedOf(event);
    if (!reported) return;
    const delta = isObject(event) && event.type === "message_delta";
    this.#reported = delta ? { ...this.#reported, ...reported } : reported;
  }

  /** The usage found, once the body has ended. */
  finish(): Usage {
    if (this.#mode === "json" && !this.#overflow) {
      this.#text += this.#decoder.decode();
      let answer: unknown;
      try {
        answer = JSON.parse(this.#text);
      } catch {
        answer = null;
      }
      this.#reported = reportedOf(answer) ?? {};
      this.#responseId = responseIdOf(answer);
      this.#text = "";
    } else if (this.#mode === "sse") {
      this.#lines(`${this.#decoder.decode()}\n`);
    }
    const usage = usageFrom(this.#reported);
    if (this.#responseId !== undefined) usage.responseId = this.#responseId;
    return usage;
  }
}
