/**
 * `POST /v1/chat/completions` and `POST /v1/completions` (docs/architecture.md, "One
 * request"): body limit, parse, validate the routing fields, find the pool, hash the prompt
 * here at the edge, ask the pool's object (or the fallback) for a decision, forward the
 * original bytes.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import { routeRequest } from "../../edge-routing/route-request.ts";
import { ApiError, modelNotFound } from "../../errors/api-error.ts";
import { forward } from "../../forward/forward.ts";
import { checkForwardedHeaders } from "../../forward/origin-request.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import { chatRequest, completionRequest, parseLlmRequest } from "../../validation/llm-request.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { requestLog } from "../middleware/request-log.ts";

/** Optional affinity key: requests with the same value share an origin under prefix policies. */
const SESSION_HEADER = "x-router-session";

function tooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    "invalid_request_error",
    "request_too_large",
    `request body is larger than ${limit} bytes`,
  );
}

/** The largest pool's limit applies until the model, and with it the pool, is known. */
const limitBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { maxBodyBytes } = await currentSettings(c.env);
  const limit = bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw tooLarge(maxBodyBytes);
    },
  });
  return limit(c, next);
};

function completionsHandler(
  schema: typeof chatRequest | typeof completionRequest,
): MiddlewareHandler<AppEnv> {
  return async function completions(c) {
    const record = c.get("record");
    checkForwardedHeaders(c.req.raw.headers);
    const settings = await currentSettings(c.env);
    const bytes = await c.req.arrayBuffer();
    const body = parseLlmRequest(bytes, schema);
    record.model = body.model;
    const pool = settings.pool(body.model);
    if (!pool) throw modelNotFound(body.model);
    if (bytes.byteLength > pool.maxBodyBytes) throw tooLarge(pool.maxBodyBytes);
    // Hashing is pure CPU, which Workers' clocks do not show (they move only across I/O):
    // `npm run bench:core` measures it.
    const key = promptKey(body, pool.chunkBytes);
    const ref = { model: body.model, pool, version: settings.version(body.model) };
    const routed = await routeRequest(c.env, c.executionCtx, ref, {
      chunkHashes: key.chunkHashes,
      promptTokens: key.promptTokens,
      sessionKey: c.req.header(SESSION_HEADER),
    });
    record.decided(routed);
    return forward({
      env: c.env,
      ctx: c.executionCtx,
      pool,
      routed,
      request: {
        path: c.req.path,
        headers: c.req.raw.headers,
        body: bytes,
        requestId: c.get("requestId"),
      },
      record,
    });
  };
}

// Per route, not `.use()`: a sub-app's `use` would also cover the other routes under /v1.
const logged = requestLog();

export const completionsRoutes = new Hono<AppEnv>()
  .post("/chat/completions", logged, limitBody, completionsHandler(chatRequest))
  .post("/completions", logged, limitBody, completionsHandler(completionRequest));
