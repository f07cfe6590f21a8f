/**
 * @module
 * The client-key step of the LLM routes and `GET /v1/models` (src/worker/access/): the request's
 * key is checked, and an LLM request counted against its key's request rate, before the body is
 * read, so a request without a key or over its rate costs no body read or parse. Sets the
 * context variable `client` (the key's record, or null while keys are not enforced) and, on the
 * LLM routes, the request record's `client` (its log line and report carry the key's id).
 */
import type { MiddlewareHandler } from "hono";
import { authenticate } from "../../access/client-access.ts";
import { checkRequestRate } from "../../access/request-rate.ts";
import type { AppEnv } from "./app-env.ts";

export interface ClientKeyOptions {
  /** Count the request against the key's requests-per-minute tier (the LLM routes). */
  countRequest?: boolean;
}

export function clientKey({
  countRequest = true,
}: ClientKeyOptions = {}): MiddlewareHandler<AppEnv> {
  return async function clientKey(c, next) {
    const now = Date.now();
    const key = await authenticate(c.env, c.req.header("authorization"), now);
    c.set("client", key);
    if (key) {
      c.get("record")?.identified(key.id, key.priority);
      if (countRequest) await checkRequestRate(c.env, key, now);
    }
    await next();
  };
}
