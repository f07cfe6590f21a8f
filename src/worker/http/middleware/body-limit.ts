/**
 * @module
 * The body limit of the routes that read a body: Hono's `bodyLimit`, which trusts a
 * Content-Length and counts a chunked body as it arrives, with its 413 in OpenAI's shape
 * (`request_too_large`, naming the limit). The limit may depend on settings (the LLM routes
 * take the largest pool's until the model is known; `tooLarge` is then the pool's own 413).
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../../errors/api-error.ts";
import type { AppEnv } from "./app-env.ts";

export interface LimitBodyOptions {
  /** Largest accepted body in bytes, or how to find it for this request. */
  maxBytes: number | ((c: Context<AppEnv>) => Promise<number>);
  /** What the body is, in the 413's message ("request body", "settings document"). */
  what: string;
}

/** The 413 for a `what` over `maxBytes`. */
export function tooLarge(what: string, maxBytes: number): ApiError {
  return new ApiError(
    413,
    "invalid_request_error",
    "request_too_large",
    `${what} is larger than ${maxBytes} bytes`,
  );
}

export function limitBody({ maxBytes, what }: LimitBodyOptions): MiddlewareHandler<AppEnv> {
  return async function limitBody(c, next) {
    const maxSize = typeof maxBytes === "number" ? maxBytes : await maxBytes(c);
    const limit = bodyLimit({
      maxSize,
      onError: () => {
        throw tooLarge(what, maxSize);
      },
    });
    return limit(c, next);
  };
}
