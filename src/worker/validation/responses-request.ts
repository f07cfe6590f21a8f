/**
 * The routing fields of an OpenAI Responses request (`POST /v1/responses`, docs/api.md):
 * `model`; `input` (a string, or an array of input items, each an object: messages, function
 * calls and their outputs, reasoning...); `instructions`; `tools`; and the fields that decide
 * where it may run: `previous_response_id` (the stored response it continues, which pins it to
 * the origin that stored it) and `store` (whether its own answer is stored: true unless false,
 * as OpenAI's default). `stream` is typed here only so a wrong one fails as a 400 before
 * routing. Every other field passes through untouched, and the origin checks the rest.
 * The same rules as chat (llm-request.ts): zod for the envelope, one hand-written pass over the
 * elements.
 */
import { z } from "zod";
import type { FieldIssue } from "./llm-fields.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Each input item an object with, when it says, a non-empty string `type` or `role`. */
function inputIssue(input: string | unknown[]): FieldIssue | undefined {
  if (typeof input === "string") return undefined;
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    if (!isObject(item)) return { path: [i], message: "expected an input item object" };
    for (const key of ["type", "role"] as const) {
      const value = item[key];
      if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
        return { path: [i, key], message: "expected a non-empty string" };
      }
    }
  }
  return undefined;
}

const isInput = (value: unknown): value is string | unknown[] =>
  typeof value === "string" || Array.isArray(value);

/**
 * A response id as OpenAI and vLLM make them (`resp_` and letters, digits, `-`, `_`); bounded,
 * so it can name an entry and a URL path without escaping.
 */
export const RESPONSE_ID = /^[A-Za-z0-9_-]{1,256}$/;

export const responsesRequest = z.object({
  model: z.string().min(1).max(256),
  input: z
    .custom<string | unknown[]>(isInput, "expected a string or an array of input items")
    .check((ctx) => {
      const issue = inputIssue(ctx.value);
      if (issue) ctx.issues.push({ code: "custom", input: ctx.value, ...issue });
    })
    .optional(),
  instructions: z.string().nullable().optional(),
  tools: z.custom<unknown[]>(Array.isArray, "expected an array").optional(),
  previous_response_id: z
    .string()
    .regex(RESPONSE_ID, "expected a response id (letters, digits, - and _)")
    .nullable()
    .optional(),
  store: z.boolean().nullable().optional(),
  stream: z.boolean().nullable().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequest>;
