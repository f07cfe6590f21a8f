/**
 * The Worker's one error handler and its not-found handler: every failure, ours or a Hono
 * middleware's, leaves as `{ "error": { "message", "type", "code", "param" } }`, OpenAI's shape,
 * so any OpenAI SDK surfaces it cleanly. Unexpected errors are logged with the request id and
 * answered with a generic message: their text may hold a URL, a header or a stack.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
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

/** Hono's own exceptions (body limit, bearer auth) in OpenAI terms; their headers are kept. */
function fromHttpException(c: Context<AppEnv>, err: HTTPException): Response {
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
  return c.json(errorBody(message, type, code), err.status, headers);
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    const { param, headers, details } = err.options;
    return c.json(
      errorBody(err.message, err.type, err.code, param ?? null, details),
      err.status,
      headers,
    );
  }
  if (err instanceof HTTPException) return fromHttpException(c, err);
  console.error(`request ${c.get("requestId") ?? "-"} failed:`, err);
  return c.json(errorBody("internal error", "server_error", "internal_error"), 500);
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  c.json(
    errorBody(`no route for ${c.req.method} ${c.req.path}`, "not_found_error", "not_found"),
    404,
  );
