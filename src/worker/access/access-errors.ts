/**
 * @module
 * The client-key errors, in OpenAI's own shape for each: a missing or wrong key is a 401
 * `invalid_api_key` of type `invalid_request_error` (OpenAI gives a missing key no code; one
 * code lets clients switch on it), a model the key may not use a 403 `model_not_allowed`
 * (OpenAI says `model_not_found` there; the key exists, so the router says what is wrong), a
 * pool no key names and not open a 403 `pool_closed`. No message repeats the key, or any part
 * of it.
 */
import { ApiError } from "../errors/api-error.ts";

const BEARER = { "www-authenticate": 'Bearer realm="llm-edge-router"' };

/** How OpenAI's clients send a key; a route whose clients send it otherwise says so (`sendAs`). */
export const SEND_AS_BEARER = "'Authorization: Bearer <key>'";

/** No key: `sendAs` says where the route's clients put one. */
export const missingKey = (sendAs = SEND_AS_BEARER): ApiError =>
  new ApiError(
    401,
    "invalid_request_error",
    "invalid_api_key",
    `you didn't provide an API key: send it as ${sendAs}`,
    { headers: BEARER },
  );

/** Unknown, revoked, malformed or wrong: the client is told no more than that. */
export const invalidKey = (): ApiError =>
  new ApiError(401, "invalid_request_error", "invalid_api_key", "incorrect API key provided", {
    headers: { "www-authenticate": `${BEARER["www-authenticate"]}, error="invalid_token"` },
  });

export const modelNotAllowed = (model: string): ApiError =>
  new ApiError(
    403,
    "invalid_request_error",
    "model_not_allowed",
    `this API key does not have access to model '${model}'`,
    { param: "model" },
  );

/**
 * A pool with `access: "keys"` (the default) that no key names yet: no client can use it, so the
 * message says what the operator must do. A 403, not a 401: no key the client could send helps.
 */
export const poolClosed = (model: string): ApiError =>
  new ApiError(
    403,
    "invalid_request_error",
    "pool_closed",
    `pool '${model}' takes no requests until a client key names it: create one with POST /admin/keys, or set "access": "open" in its settings`,
    { param: "model" },
  );

export interface RateLimitReached {
  /** Which limit: OpenAI's 429s name it in `type` (`requests` or `tokens` per minute). */
  kind: "requests" | "tokens";
  keyId: string;
  /** The key's limit per minute, for the message. */
  limit: number;
  /** When a retry may pass: `Retry-After` in whole seconds (rounded up), `retry-after-ms` exactly. */
  retryAfterMs: number;
}

/**
 * Over a limit: 429 `rate_limit_exceeded`. Both headers: `Retry-After` is HTTP's; OpenAI's SDKs
 * read `retry-after-ms` first and wait for it (under 60 s) instead of their own backoff.
 */
export function rateLimited({ kind, keyId, limit, retryAfterMs }: RateLimitReached): ApiError {
  const ms = Math.max(1, Math.ceil(retryAfterMs));
  const what = kind === "requests" ? "requests" : "prompt tokens";
  return new ApiError(
    429,
    kind,
    "rate_limit_exceeded",
    `rate limit reached for key ${keyId}: ${limit} ${what} per minute; retry in ${Math.ceil(ms / 1000)} s`,
    { headers: { "retry-after": String(Math.ceil(ms / 1000)), "retry-after-ms": String(ms) } },
  );
}
