/**
 * Finds the final `usage` of an OpenAI response in its bytes as they pass, without holding
 * the stream: the engine's `prompt_tokens` and `usage.prompt_tokens_details.cached_tokens`
 * (vLLM and SGLang report the latter), the truth the router corrects its index with.
 *
 * - SSE (`text/event-stream`): each `data:` line is one JSON chunk; only lines mentioning
 *   "usage" are parsed, so the cost per token is a substring search, not a JSON parse. The last
 *   non-null usage wins (vLLM with `continuous_usage_stats` repeats it on every chunk).
 * - JSON: the body is kept up to MAX_JSON_CHARS (UTF-16 units) and parsed at the end; a larger
 *   body has no usage we can afford to find, and the outcome goes without it.
 */

export interface Usage {
  promptTokens?: number;
  cachedTokens?: number;
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

/** The `usage` of an OpenAI answer (or chunk), if it has one. */
export function usageOf(value: unknown): Usage | null {
  if (typeof value !== "object" || value === null) return null;
  const usage = (value as { usage?: unknown }).usage;
  if (typeof usage !== "object" || usage === null) return null;
  const u = usage as { prompt_tokens?: unknown; prompt_tokens_details?: unknown };
  const out: Usage = {};
  if (typeof u.prompt_tokens === "number") out.promptTokens = u.prompt_tokens;
  const details = u.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined;
  if (typeof details?.cached_tokens === "number") out.cachedTokens = details.cached_tokens;
  return out;
}

export class UsageScanner {
  readonly #mode: ScanMode;
  readonly #decoder = new TextDecoder();
  #text = "";
  #skipLine = false;
  #overflow = false;
  #usage: Usage = {};

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
    if (!line.startsWith("data:") || !line.includes('"usage"')) return;
    try {
      const usage = usageOf(JSON.parse(line.slice(5)));
      if (usage) this.#usage = usage;
    } catch {
      // Not JSON (a `[DONE]` marker or a foreign event): nothing to learn.
    }
  }

  /** The usage found, once the body has ended. */
  finish(): Usage {
    if (this.#mode === "json" && !this.#overflow) {
      this.#text += this.#decoder.decode();
      try {
        this.#usage = usageOf(JSON.parse(this.#text)) ?? {};
      } catch {
        this.#usage = {};
      }
      this.#text = "";
    } else if (this.#mode === "sse") {
      this.#lines(`${this.#decoder.decode()}\n`);
    }
    return this.#usage;
  }
}
