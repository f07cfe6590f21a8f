/**
 * The Worker's errors in the Anthropic Messages API's own shape, for the requests of
 * `/v1/messages` (http/on-error.ts; a broken stream's closing event, forward/sse-ending.ts):
 * `{"type":"error","error":{"type","message"},"request_id"}`, with Anthropic's types for its
 * statuses (https://platform.claude.com/docs/en/api/errors): 400 invalid_request_error (also
 * "other 4XX status codes not listed"), 401 authentication_error, 403 permission_error, 404
 * not_found_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 529
 * overloaded_error. The router's 503s (no origin available, every origin busy, admission's
 * queue full) are Anthropic's overload and leave as 529, which its SDKs retry; their
 * `retry-after` stays, in seconds, as Anthropic sends it on 429s
 * (https://platform.claude.com/docs/en/api/rate-limits, "Response headers"). Other 5xx keep
 * their status as `api_error`. The router's own `code` is not in the shape: the log line has it.
 */

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

/** The status code Anthropic answers overload with. */
export const OVERLOADED = 529;

const BY_STATUS: Readonly<Record<number, AnthropicErrorType>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  [OVERLOADED]: "overloaded_error",
};

/** Anthropic's status and type for an error the router answers with `status`. */
export function anthropicStatus(status: number): { status: number; type: AnthropicErrorType } {
  const mapped = status === 503 ? OVERLOADED : status;
  const type = BY_STATUS[mapped] ?? (mapped < 500 ? "invalid_request_error" : "api_error");
  return { status: mapped, type };
}

/** Anthropic's error body. */
export function anthropicErrorBody(type: AnthropicErrorType, message: string, requestId?: string) {
  const body = { type: "error", error: { type, message } };
  return requestId === undefined ? body : { ...body, request_id: requestId };
}

/** Whether a request's errors take Anthropic's shape: those of `/v1/messages` and below it. */
export function speaksAnthropic(path: string): boolean {
  return path === "/v1/messages" || path.startsWith("/v1/messages/");
}
