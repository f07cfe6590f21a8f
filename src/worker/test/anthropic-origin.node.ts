/**
 * The test origins' Anthropic Messages answers (origin-server.node.ts), for requests to
 * `/v1/messages` and `/v1/messages/count_tokens`: the same prompt and cached counts as the chat
 * answers (`ceil(body bytes / 4)` prompt tokens, CACHED_TOKENS of them cached), in Anthropic's
 * fields, where `input_tokens` leaves out the cached part
 * (https://platform.claude.com/docs/en/api/messages, `usage`). Streamed as Anthropic streams:
 * `message_start` with the input side of the usage, the content events, then `message_delta`
 * with the output side (https://platform.claude.com/docs/en/build-with-claude/streaming).
 */
import { CACHED_TOKENS } from "./fixture.ts";

/** Whether a request path is one of the Messages API's. */
export const isMessagesPath = (path: string): boolean => /\/v1\/messages(\/|$|\?)/.test(path);

function inputUsage(body: Buffer) {
  const promptTokens = Math.ceil(body.length / 4);
  return {
    input_tokens: Math.max(0, promptTokens - CACHED_TOKENS),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: CACHED_TOKENS,
  };
}

/** A count_tokens answer, or a whole message. */
export function anthropicJson(path: string, name: string, body: Buffer): string {
  if (path.includes("/count_tokens")) {
    return JSON.stringify({ input_tokens: Math.ceil(body.length / 4) });
  }
  return JSON.stringify({
    id: `msg_${name}`,
    type: "message",
    role: "assistant",
    model: "test",
    content: [{ type: "text", text: "café €" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { ...inputUsage(body), output_tokens: 3 },
  });
}

/** A message's SSE events, one chunk each. */
export function anthropicSse(name: string, body: Buffer): Buffer[] {
  const event = (type: string, data: Record<string, unknown>) =>
    Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const message = {
    id: `msg_${name}`,
    type: "message",
    role: "assistant",
    model: "test",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...inputUsage(body), output_tokens: 0 },
  };
  return [
    event("message_start", { message }),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "café €" } }),
    event("content_block_stop", { index: 0 }),
    event("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 3 },
    }),
    event("message_stop", {}),
  ];
}
