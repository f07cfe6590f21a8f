/**
 * Why admission refused a request, and what the client is told (docs/api.md, "Admission"). Two
 * statuses, as OpenAI's API uses them: 429 when this client is over its own share (the same
 * request from a lighter key would have waited), 503 when the pool is over its objective for
 * everyone of this priority. Both carry `Retry-After`.
 *
 * - `queue-full` (503): the waiting room is full and no key holds more than its share.
 * - `queue-wait` (503): at the recent admission rate the request would wait past
 *   `queueTimeoutMs`, so it is told at once rather than after the timeout.
 * - `queue-timeout` (503): it waited `queueTimeoutMs` and the pool never had room.
 * - `displaced` (503): a batch request gave its place to an interactive one (batch is shed
 *   before interactive).
 * - `over-share` (429): the room is full and this request's key holds the most places of its
 *   band while other keys wait: its own newest request gives way.
 */
export type ShedReason = "queue-full" | "queue-wait" | "queue-timeout" | "displaced" | "over-share";

export const SHED_REASONS: readonly ShedReason[] = [
  "queue-full",
  "queue-wait",
  "queue-timeout",
  "displaced",
  "over-share",
];

export interface Shed {
  readonly reason: ShedReason;
  readonly status: 429 | 503;
  /** When the client may try again, ms (the Worker sends whole seconds in `Retry-After`). */
  readonly retryAfterMs: number;
  /** How long it waited at the router before being shed (0: at once). */
  readonly waitedMs: number;
}

/** Shortest and longest `Retry-After` (OpenAI's clients honour up to 60 s). */
export const RETRY_AFTER_MIN_MS = 1000;
export const RETRY_AFTER_MAX_MS = 60_000;

export function shed(reason: ShedReason, retryAfterMs: number, waitedMs: number): Shed {
  const bounded = Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
  return {
    reason,
    status: reason === "over-share" ? 429 : 503,
    retryAfterMs: Math.ceil(bounded / 1000) * 1000,
    waitedMs,
  };
}
