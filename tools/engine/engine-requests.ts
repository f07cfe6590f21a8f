/**
 * The request bodies the engine accepts, checked as far as the engine needs them: chat and
 * text completions, Anthropic Messages (`max_tokens` required, as Anthropic requires it) and
 * OpenAI Responses (`input` a string or items; `previous_response_id`, `store`). A bad body is
 * a message for a 400 in the API's own error shape.
 */
import type { Kind } from "./openai-format.ts";

export type Body = { model: string; [field: string]: unknown };

export interface Parsed {
  /** The body as the engine hashes it. */
  body: Body;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

export interface ParsedResponses extends Parsed {
  /** The new input as items (a string input is one user message). */
  input: unknown[];
  previousResponseId: string | null;
  store: boolean;
}

function object(text: string): Record<string, unknown> | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "body is not valid JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "body must be a JSON object";
  if (typeof (body as { model?: unknown }).model !== "string") return "model is required";
  return body as Record<string, unknown>;
}

function positive(max: unknown, field: string): number | string {
  return typeof max === "number" && Number.isInteger(max) && max >= 1
    ? max
    : `${field} must be a positive integer`;
}

export function parseCompletion(
  text: string,
  kind: Kind,
  defaultMaxTokens: number,
): Parsed | string {
  const b = object(text);
  if (typeof b === "string") return b;
  if (kind === "chat" && (!Array.isArray(b.messages) || b.messages.length === 0))
    return "messages must be a non-empty array";
  if (kind === "text" && b.prompt === undefined) return "prompt is required";
  const max = positive(b.max_completion_tokens ?? b.max_tokens ?? defaultMaxTokens, "max_tokens");
  if (typeof max === "string") return max;
  const options = b.stream_options as { include_usage?: unknown } | undefined;
  return {
    body: b as Body,
    maxTokens: max,
    stream: b.stream === true,
    includeUsage: options?.include_usage === true,
  };
}

/** `count_tokens` needs no `max_tokens`. */
export function parseMessages(text: string, countOnly = false): Parsed | string {
  const b = object(text);
  if (typeof b === "string") return b;
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    return "messages: must be a non-empty array";
  const max = countOnly ? 1 : positive(b.max_tokens, "max_tokens");
  if (typeof max === "string") return max;
  return { body: b as Body, maxTokens: max, stream: b.stream === true, includeUsage: true };
}

export function parseResponses(text: string, defaultMaxTokens: number): ParsedResponses | string {
  const b = object(text);
  if (typeof b === "string") return b;
  const input = typeof b.input === "string" ? [{ role: "user", content: b.input }] : b.input;
  if (!Array.isArray(input)) return "'input' must be a string or array of objects";
  const max = positive(b.max_output_tokens ?? defaultMaxTokens, "max_output_tokens");
  if (typeof max === "string") return max;
  const previous = b.previous_response_id;
  if (previous !== undefined && previous !== null && typeof previous !== "string")
    return "previous_response_id must be a string";
  return {
    body: b as Body,
    maxTokens: max,
    stream: b.stream === true,
    includeUsage: true,
    input,
    previousResponseId: previous ?? null,
    store: b.store !== false,
  };
}
