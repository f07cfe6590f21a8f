/**
 * OpenAI response bodies and SSE chunks as vLLM writes them, for chat and text completions.
 * `usage.prompt_tokens_details.cached_tokens` appears only when the hit is non-zero, exactly as
 * vLLM does with `--enable-prompt-tokens-details` (the field is omitted for a miss).
 */
export type Kind = "chat" | "text";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export function usageOf(
  promptTokens: number,
  completionTokens: number,
  cachedTokens: number,
): Usage {
  const usage: Usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  if (cachedTokens > 0) usage.prompt_tokens_details = { cached_tokens: cachedTokens };
  return usage;
}

export interface Envelope {
  id: string;
  created: number;
  model: string;
}

/** One streamed chunk: `text` (possibly empty), an optional finish reason. */
export function chunk(
  kind: Kind,
  e: Envelope,
  text: string,
  finish: string | null,
  first: boolean,
): string {
  const choice =
    kind === "chat"
      ? {
          index: 0,
          delta: first ? { role: "assistant", content: text } : { content: text },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text, logprobs: null, finish_reason: finish };
  const object = kind === "chat" ? "chat.completion.chunk" : "text_completion";
  return `data: ${JSON.stringify({ id: e.id, object, created: e.created, model: e.model, choices: [choice] })}\n\n`;
}

/** The last chunk of a stream asked for with `stream_options.include_usage`. */
export function usageChunk(kind: Kind, e: Envelope, usage: Usage): string {
  const object = kind === "chat" ? "chat.completion.chunk" : "text_completion";
  return `data: ${JSON.stringify({ id: e.id, object, created: e.created, model: e.model, choices: [], usage })}\n\n`;
}

export const DONE = "data: [DONE]\n\n";

export function completion(
  kind: Kind,
  e: Envelope,
  text: string,
  finish: string,
  usage: Usage,
): unknown {
  const choice =
    kind === "chat"
      ? {
          index: 0,
          message: { role: "assistant", content: text },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text, logprobs: null, finish_reason: finish };
  const object = kind === "chat" ? "chat.completion" : "text_completion";
  return { id: e.id, object, created: e.created, model: e.model, choices: [choice], usage };
}

export function errorBody(message: string, type: string, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** The counts an answer reports: the whole prompt, its cached part, the output. */
export interface Counts {
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
}

/**
 * One API's answer as text on the wire, so the engine's generation loop is the same for every
 * API: an unstreamed body, or a stream of SSE events (`open` when the stream starts, `delta` for
 * each piece of output, the first with the prompt's counts known, `close` to end it).
 */
export interface AnswerWriter {
  open(): string;
  delta(piece: string, first: boolean, counts: Counts): string;
  close(text: string, counts: Counts): string;
  whole(text: string, counts: Counts): Record<string, unknown>;
}

/** Chat and text completions as vLLM writes them (usage at the end only when asked for). */
export function completionWriter(kind: Kind, e: Envelope, includeUsage: boolean): AnswerWriter {
  const usage = (c: Counts) => usageOf(c.promptTokens, c.outputTokens, c.cachedTokens);
  return {
    open: () => "",
    delta: (piece, first) =>
      (first ? chunk(kind, e, "", null, true) : "") + chunk(kind, e, piece, null, false),
    close: (_text, c) =>
      chunk(kind, e, "", "length", false) +
      (includeUsage ? usageChunk(kind, e, usage(c)) : "") +
      DONE,
    whole: (text, c) => completion(kind, e, text, "length", usage(c)) as Record<string, unknown>,
  };
}
