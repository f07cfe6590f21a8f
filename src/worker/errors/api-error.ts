/**
 * The one error class of the Worker: an HTTP status plus the OpenAI error fields (`type`,
 * `code`, `param`), so every route can throw and `onError` renders it. Messages are written for
 * the client: they never carry secrets, origin API keys, origin URLs or stack traces.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * OpenAI's error types (the `type` field clients switch on). A rate limit's type names the limit
 * that was reached, as OpenAI's 429s do: `requests` (per minute) or `tokens` (per minute).
 */
export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "not_found_error"
  | "rate_limit_error"
  | "requests"
  | "tokens"
  | "server_error";

export interface ApiErrorOptions {
  /** The request field at fault, e.g. `messages`. */
  param?: string;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /** Extra machine-readable detail under `error.details` (e.g. each invalid settings field). */
  details?: unknown;
}

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly type: ApiErrorType;
  readonly code: string;
  readonly options: ApiErrorOptions;

  constructor(
    status: ContentfulStatusCode,
    type: ApiErrorType,
    code: string,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.type = type;
    this.code = code;
    this.options = options;
  }
}

export const invalidRequest = (code: string, message: string, param?: string): ApiError =>
  new ApiError(400, "invalid_request_error", code, message, param === undefined ? {} : { param });

/** No pool serves `model` (OpenAI's own answer to an unknown model). */
export const modelNotFound = (model: string): ApiError =>
  new ApiError(
    404,
    "invalid_request_error",
    "model_not_found",
    `the model '${model}' does not exist`,
    {
      param: "model",
    },
  );
