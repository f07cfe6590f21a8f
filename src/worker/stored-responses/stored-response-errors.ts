/**
 * The errors of OpenAI Responses' stored-response affinity (docs/api.md, "Stored responses"),
 * in OpenAI's shape. An id the router does not know, or whose origin has left the pool, is
 * OpenAI's own answer to an unknown `previous_response_id`: 400 `previous_response_not_found`
 * (vLLM answers 404 for the same; clients are written against OpenAI's), which tells the client
 * to send the whole conversation again. An origin that holds the response but takes nothing
 * now (draining, down, its circuit open), or a router that cannot look the id up, is a 503 with
 * `Retry-After`: trying again later may succeed, and no other origin can serve it meanwhile.
 */
import { ApiError } from "../errors/api-error.ts";

export function previousResponseNotFound(id: string, why: "unknown" | "gone"): ApiError {
  const reason =
    why === "unknown"
      ? "the router has no record of it (never stored, deleted, or expired)"
      : "the origin that stored it has left this model's pool";
  return new ApiError(
    400,
    "invalid_request_error",
    "previous_response_not_found",
    `Previous response with id '${id}' not found: ${reason}.`,
    { param: "previous_response_id" },
  );
}

/** For GET and DELETE /v1/responses/{id}: no pool knows the id. */
export function responseNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "invalid_request_error",
    "response_not_found",
    `Response with id '${id}' not found.`,
    { param: "response_id" },
  );
}

/** `why`: what stops it now; only the origin that stored the response can serve it. */
export function storedResponseUnavailable(
  id: string,
  why: string,
  retryAfterSeconds: number,
): ApiError {
  return new ApiError(
    503,
    "server_error",
    "stored_response_unavailable",
    `response '${id}' cannot be continued now: ${why}; only the origin that stored it holds it`,
    { headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) } },
  );
}
