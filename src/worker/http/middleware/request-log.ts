/**
 * @module
 * Middleware of the LLM routes: gives each request a `RequestRecord` (context variable
 * `record`) and writes its log line when the handler is done, unless the response body is
 * still streaming (forward then writes it when the body ends). Errors thrown by any later
 * handler have been rendered by `onError` by then, so the line carries the client's status
 * and the error code.
 */
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError } from "../../errors/api-error.ts";
import { RequestRecord } from "../../request-record/request-record.ts";
import type { LlmApiName } from "../../request-record/request-report.ts";
import type { AppEnv } from "./app-env.ts";

function errorCode(error: unknown): string | null {
  if (error === undefined || error === null) return null;
  if (error instanceof ApiError) return error.code;
  if (error instanceof HTTPException)
    return error.status === 413 ? "request_too_large" : "http_error";
  return "internal_error";
}

/** The record of a request of `api` (its log line's and metrics' `api` label). */
export function requestLog(api: LlmApiName): MiddlewareHandler<AppEnv> {
  return async function requestLog(c, next) {
    const record = new RequestRecord(c.get("requestId"), Date.now(), api);
    c.set("record", record);
    await next();
    if (!record.streaming) record.log(c.res.status, errorCode(c.error), Date.now());
  };
}
