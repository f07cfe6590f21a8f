/**
 * @module
 * What the Worker tells the pool's object about one finished request, beside the core's
 * `Outcome`, so the object can keep the pool's metrics for every isolate in one place: where it
 * went, how it ended, the engine's usage, and the time spent hashing at the edge and waiting for
 * the object. Plain data; it crosses Workers RPC with `complete`. No prompt text, no request id.
 */
import type { FailureKind } from "../../core/router/router-types.ts";

/**
 * How a request ended, as the `outcome` label:
 * - ok:            an origin answered 2xx and the body reached the client in full;
 * - origin_status: an origin answered another status (e.g. the engine's 400), passed through;
 * - client_abort:  the client went away before the body ended;
 * - stream_error:  the origin broke its stream after the first byte;
 * - failed:        no origin answered before its first byte (502/503 to the client).
 */
export type RequestOutcome = "ok" | "origin_status" | "client_abort" | "stream_error" | "failed";

export const REQUEST_OUTCOMES: readonly RequestOutcome[] = [
  "ok",
  "origin_status",
  "client_abort",
  "stream_error",
  "failed",
];

/** An attempt that failed before its first byte, after which the next origin was tried. */
export interface FailedAttempt {
  readonly origin: string;
  readonly kind: FailureKind;
}

export interface RequestSample {
  /** The origin that answered, or the last one tried when none did. */
  readonly origin: string | null;
  readonly outcome: RequestOutcome;
  /** Failovers: each origin left for the next one, and why. */
  readonly failovers: readonly FailedAttempt[];
  /** Prompt tokens the serving origin was believed to hold. */
  readonly matchedTokens: number;
  /** The engine's usage, when it reported one. */
  readonly promptTokens?: number | undefined;
  readonly cachedTokens?: number | undefined;
  /** Origin's first body byte after its request was sent. */
  readonly ttfbMs?: number | undefined;
  /** Hashing the prompt at the edge. */
  readonly hashMs: number;
  /** The `route` call's round trip to the object; null when the Worker routed alone. */
  readonly objectMs: number | null;
  /** `fallback-*` reason when the Worker routed alone, else null. */
  readonly fallback: string | null;
}
