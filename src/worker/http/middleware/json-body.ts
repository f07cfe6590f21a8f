/**
 * @module
 * The request body as JSON, for the routes that take one: read once as bytes (Hono keeps them,
 * so the handler reads the same bytes again, e.g. to forward or to verify them), decoded as
 * UTF-8, checked by `precheck` before JSON.parse when its cost must be bounded first (the LLM
 * routes' structural budget), parsed, and set as the context variable `json`. Every failure is
 * a 400 in OpenAI's shape: `invalid_json` naming what the body is.
 */
import type { MiddlewareHandler } from "hono";
import { invalidRequest } from "../../errors/api-error.ts";

export interface JsonBodyOptions {
  /** What the body is, in the 400's message ("request body", "settings document"). */
  what?: string;
  /** Checks of the text before it is parsed; throws the ApiError of a body it refuses. */
  precheck?: (text: string) => void;
  /** Accept only a JSON object (not an array, string, number, boolean or null). */
  object?: boolean;
}

export interface JsonBodyEnv {
  Variables: { json: unknown };
}

export function jsonBody({
  what = "request body",
  precheck,
  object = false,
}: JsonBodyOptions = {}): MiddlewareHandler<JsonBodyEnv> {
  return async function jsonBody(c, next) {
    const text = new TextDecoder().decode(await c.req.arrayBuffer());
    precheck?.(text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw invalidRequest("invalid_json", `${what} is not valid JSON`);
    }
    if (object && (typeof json !== "object" || json === null || Array.isArray(json))) {
      throw invalidRequest("invalid_json", `${what} must be a JSON object`);
    }
    c.set("json", json);
    await next();
  };
}
