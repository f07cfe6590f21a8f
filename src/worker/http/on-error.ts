/**
 * The Worker's one error handler and its not-found handler: every failure, ours or a Hono
 * middleware's, leaves in the shape of the API the client called. Requests of `/v1/messages`
 * get Anthropic's (`{"type":"error","error":{"type","message"}}`, its types and statuses:
 * errors/anthropic-error.ts), so Anthropic's SDKs and Claude Code raise their typed errors;
 * every other request OpenAI's (`{ "error": { "message", "type", "code", "param" } }`), so any
 * OpenAI SDK surfaces it cleanly. Errors an origin answered are not rendered here: they pass
 * through untouched. Unexpected errors are logged with the request id and answered with a
 * generic message: their text may hold a URL, a header or a stack.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { anthropicErrorBody, anthropicStatus, speaksAnthropic } from "../errors/anthropic-error.ts";
import { ApiError, type ApiErrorType } from "../errors/api-error.ts";
import type { AppEnv } from "./middleware/app-env.ts";

function errorBody(
  message: string,
  type: ApiErrorType,
  code: string,
  param: string | null = null,
  details?: unknown,
) {
  const error = { message, type, code, param };
  return { error: details === undefined ? error : { ...error, details } };
}

/** `error` rendered for the API the request called. */
function render(c: Context<AppEnv>, error: ApiError): Response {
  const { param, headers, details } = error.options;
  if (speaksAnthropic(c.req.path)) {
    const { status, type } = anthropicStatus(error.status);
    const body = anthropicErrorBody(type, error.message, c.get("requestId"));
    return c.json(body, status as ContentfulStatusCode, headers);
  }
  const body = errorBody(error.message, error.type, error.code, param ?? null, details);
  return c.json(body, error.status, headers);
}

/** Hono's own exceptions (body limit, bearer auth) as ours; their headers are kept. */
function fromHttpException(err: HTTPException): ApiError {
  const headers = err.res ? Object.fromEntries(err.res.headers) : {};
  delete headers["content-type"];
  delete headers["content-length"];
  const [type, code, message]: [ApiErrorType, string, string] =
    err.status === 413
      ? ["invalid_request_error", "request_too_large", "request body is too large"]
      : err.status === 401
        ? ["authentication_error", "unauthorized", "missing or invalid bearer token"]
        : err.status === 400
          ? ["invalid_request_error", "bad_request", "malformed request"]
          : ["server_error", "http_error", `request failed with status ${err.status}`];
  return new ApiError(err.status as ContentfulStatusCode, type, code, message, { headers });
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) return render(c, err);
  if (err instanceof HTTPException) return render(c, fromHttpException(err));
  console.error(`request ${c.get("requestId") ?? "-"} failed:`, err);
  return render(c, new ApiError(500, "server_error", "internal_error", "internal error"));
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  render(
    c,
    new ApiError(404, "not_found_error", "not_found", `no route for ${c.req.method} ${c.req.path}`),
  );
