/**
 * The fields of an Anthropic Messages request (`POST /v1/messages`) the router needs, checked as
 * chat's are (`llm-request.ts`): zod for the envelope, the elements by hand in one pass
 * (`messages-fields.ts`). `model`, `messages` and `max_tokens` are required, as Anthropic's API
 * requires them (https://platform.claude.com/docs/en/api/messages); `system`, `tools` and
 * `stream` are checked when present. Every other field passes through untouched to the origin,
 * which validates the rest; the router forwards the client's original bytes. A token count
 * (`/v1/messages/count_tokens`) takes the same fields but `max_tokens` and `stream`.
 */
import { z } from "zod";
import { checked, isArray, model } from "./llm-request.ts";
import { anthropicMessagesIssue, systemBlocksIssue, toolsIssue } from "./messages-fields.ts";

const isSystem = (value: unknown): value is string | unknown[] =>
  typeof value === "string" || Array.isArray(value);
const system = checked(isSystem, "a string or an array of text blocks", (value) =>
  typeof value === "string" ? undefined : systemBlocksIssue(value),
);

export const countTokensRequest = z.object({
  model,
  messages: checked(isArray, "an array of messages", anthropicMessagesIssue),
  system: system.optional(),
  tools: checked(isArray, "an array of tools", toolsIssue).optional(),
});

export const messagesRequest = countTokensRequest.extend({
  max_tokens: z.number().int().min(1),
  stream: z.boolean().optional(),
});

export type MessagesRequest = z.infer<typeof countTokensRequest>;
