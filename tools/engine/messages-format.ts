/**
 * Anthropic Messages answers as the engines write them (`POST /v1/messages`): the message body,
 * or its SSE events (`message_start`, `content_block_start`, `content_block_delta`...,
 * `content_block_stop`, `message_delta`, `message_stop`), and errors in Anthropic's shape.
 * Usage as Anthropic counts it and llama.cpp's server reports it (observed): `input_tokens` is
 * the part of the prompt not read from cache, `cache_read_input_tokens` the part that was; no
 * `cache_creation_input_tokens`. Streamed, `message_start` (sent with the first token, once
 * the cache hit is known, as llama.cpp does) carries the input side and `message_delta` only
 * `output_tokens`.
 */
import type { AnswerWriter, Counts, Envelope } from "./openai-format.ts";

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function usage(c: Counts, outputTokens: number) {
  return {
    input_tokens: c.promptTokens - c.cachedTokens,
    cache_read_input_tokens: c.cachedTokens,
    output_tokens: outputTokens,
  };
}

export function messagesWriter(e: Envelope): AnswerWriter {
  const message = (content: unknown[], stop: string | null, u: unknown) => ({
    id: e.id,
    type: "message",
    role: "assistant",
    model: e.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: u,
  });
  return {
    open: () => "",
    delta: (piece, first, c) =>
      (first
        ? event("message_start", { message: message([], null, usage(c, 0)) }) +
          event("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
        : "") +
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } }),
    close: (_text, c) =>
      event("content_block_stop", { index: 0 }) +
      event("message_delta", {
        delta: { stop_reason: "max_tokens", stop_sequence: null },
        usage: { output_tokens: c.outputTokens },
      }) +
      event("message_stop", {}),
    whole: (text, c) => message([{ type: "text", text }], "max_tokens", usage(c, c.outputTokens)),
  };
}

/** Anthropic's error body: `invalid_request_error` (400), `not_found_error` (404)... */
export function messagesError(message: string, type = "invalid_request_error"): string {
  return JSON.stringify({ type: "error", error: { type, message } });
}
