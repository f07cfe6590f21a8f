/**
 * A request the pool's admission shed (src/core/admission/shed.ts), as the client sees it:
 * OpenAI's error shape with `Retry-After` in whole seconds, which OpenAI's clients honour. 429
 * when this client's key is over its share of the queue, 503 when the pool is over its latency
 * objective for everyone of the request's priority. And the error of a held request whose client
 * left (nobody reads it).
 */
import type { Shed } from "../../../core/admission/shed.ts";
import { ApiError } from "../../errors/api-error.ts";

export function shedError(shed: Shed): ApiError {
  const seconds = String(Math.ceil(shed.retryAfterMs / 1000));
  const options = { headers: { "Retry-After": seconds } };
  return shed.status === 429
    ? new ApiError(
        429,
        "rate_limit_error",
        "over_share",
        `this client holds more than its share of the pool's queue (${shed.reason}); retry after ${seconds} s`,
        options,
      )
    : new ApiError(
        503,
        "server_error",
        "overloaded",
        `the pool is over its latency objective (${shed.reason}); retry after ${seconds} s`,
        options,
      );
}

/** A held request's client left while it waited: nobody reads this answer. */
export function clientLeftError(): ApiError {
  return new ApiError(503, "server_error", "client_left", "left");
}
