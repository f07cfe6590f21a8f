/**
 * The few fields of an OpenAI request the router needs, validated with zod: `model`, and
 * `messages` (chat) or `prompt` (completions) in shapes the canonicaliser understands. Every
 * other field passes through untouched to the origin, which validates the rest; the router
 * forwards the client's original bytes, never this parsed copy.
 */
import { z } from "zod";
import { invalidRequest } from "../errors/api-error.ts";

const model = z.string().min(1).max(256);
const tokenIds = z.array(z.number().int().min(0)).min(1);

export const chatRequest = z.looseObject({
  model,
  messages: z.array(z.looseObject({ role: z.string().min(1) })).min(1),
  tools: z.array(z.unknown()).optional(),
});

export const completionRequest = z.looseObject({
  model,
  prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds, z.array(tokenIds).min(1)]),
});

export type LlmRequest = z.infer<typeof chatRequest> | z.infer<typeof completionRequest>;

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) at = (at as Record<PropertyKey, unknown> | undefined)?.[key];
  return at;
}

/** Parse the raw body and check it against `schema`; every failure is a 400 in OpenAI's shape. */
export function parseLlmRequest(
  bytes: ArrayBuffer,
  schema: typeof chatRequest | typeof completionRequest,
): LlmRequest {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw invalidRequest("invalid_json", "request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("invalid_json", "request body must be a JSON object");
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue?.path.map(String).join(".") || undefined;
  const missing = issue?.code === "invalid_type" && valueAt(body, issue.path) === undefined;
  throw invalidRequest(
    missing ? "missing_required_parameter" : "invalid_value",
    `${param ?? "body"}: ${missing ? "is required" : issue?.message}`,
    param,
  );
}
