/**
 * The few fields of an OpenAI request the router needs: `model`, and `messages` (chat) or
 * `prompt` (completions) in shapes the canonicaliser understands, plus `tools`. Every other
 * field passes through untouched to the origin, which validates the rest; the router forwards
 * the client's original bytes, never this parsed copy.
 *
 * Cost is O(body bytes) with a small constant for any body: the structural budget
 * (`checkJsonBudget`, which the routes run before JSON.parse); zod checks the envelope (`model`
 * and the types of the other fields) without visiting array elements; the elements are checked
 * by hand in one pass that stops at the first bad one (`llm-fields.ts`). zod over the elements
 * is what made a prompt of 1M token ids take 3.0 s and 219 MB (issue 9).
 */
import { z } from "zod";
import { invalidRequest } from "../errors/api-error.ts";
import { exceedsJsonBudget } from "./json-budget.ts";
import { type FieldIssue, messagesIssue, promptIssue } from "./llm-fields.ts";
import { routerOwnedField } from "./router-owned-fields.ts";

export const model = z.string().min(1).max(256);

/** A value of type `T` (checked by `is`, elements unvisited), then `elements` in one pass. */
export function checked<T>(
  is: (value: unknown) => value is T,
  expected: string,
  elements: (value: T) => FieldIssue | undefined,
) {
  return z.custom<T>(is, `expected ${expected}`).check((ctx) => {
    const issue = elements(ctx.value);
    if (issue) ctx.issues.push({ code: "custom", input: ctx.value, ...issue });
  });
}

export const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
const isPrompt = (value: unknown): value is string | unknown[] =>
  typeof value === "string" || Array.isArray(value);

export const chatRequest = z.object({
  model,
  messages: checked(isArray, "an array of messages", messagesIssue),
  tools: z.custom<unknown[]>(isArray, "expected an array").optional(),
});

export const completionRequest = z.object({
  model,
  prompt: checked(isPrompt, "a string, strings, token ids or arrays of token ids", promptIssue),
});

export type LlmRequest = z.infer<typeof chatRequest> | z.infer<typeof completionRequest>;

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) at = (at as Record<PropertyKey, unknown> | undefined)?.[key];
  return at;
}

/**
 * The structural budget of a body's text (`json-budget.ts`), checked before JSON.parse, whose
 * cost it bounds: over it, a 400 naming the part of the body at fault.
 */
export function checkJsonBudget(text: string): void {
  const over = exceedsJsonBudget(text);
  if (over) {
    throw invalidRequest("invalid_value", `${over.field ?? "body"}: ${over.reason}`, over.field);
  }
}

/**
 * Check a parsed body against `schema` (chat's, completions', or another API's routing fields);
 * the first bad field is a 400 that names it.
 */
export function validateLlmRequest<Schema extends z.ZodType<{ model: string }>>(
  body: Record<string, unknown>,
  schema: Schema,
): z.infer<Schema> {
  const owned = routerOwnedField(body);
  if (owned !== undefined) {
    throw invalidRequest(
      "invalid_value",
      `${owned}: is set by the router for disaggregated serving, never by a client`,
      owned,
    );
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue?.path.map(String).join(".") || undefined;
  const missing = issue !== undefined && valueAt(body, issue.path) === undefined;
  throw invalidRequest(
    missing ? "missing_required_parameter" : "invalid_value",
    `${param ?? "body"}: ${missing ? "is required" : issue?.message}`,
    param,
  );
}
