/**
 * @module
 * What the router did with one LLM request, filled in as the request goes (the handler hashes,
 * routing decides, forward tries origins) and finished once, two ways: the `RequestSample` the
 * pool's object records in its metrics, and one JSON log line through `console.log`, which
 * Workers Logs and Logpush collect. The line never holds prompt text, origin URLs, headers or
 * secrets: only ids, reasons, counts and timings (docs/api.md lists its fields).
 */
import type { Routed } from "../edge-routing/route-request.ts";
import type { FailedAttempt, RequestOutcome, RequestSample } from "./request-report.ts";

/** The engine's usage and timing, once the response has ended. */
export interface RequestEnd {
  ttfbMs?: number | undefined;
  promptTokens?: number | undefined;
  cachedTokens?: number | undefined;
}

export interface RequestLogLine {
  msg: "llm_request";
  requestId: string;
  model: string | null;
  /** Status sent to the client. */
  status: number;
  /** How it ended; `rejected` when the router answered itself (bad input, no origin...). */
  outcome: RequestOutcome | "rejected";
  origin: string | null;
  policy: string | null;
  reason: string | null;
  /** True when the Worker routed alone (`reason` says why). */
  fallback: boolean;
  matchedTokens: number;
  promptTokens: number | null;
  cachedTokens: number | null;
  ttfbMs: number | null;
  durationMs: number;
  attempts: number;
  failovers: number;
  /** Every attempt that failed before its first byte. */
  failures: FailedAttempt[];
  hashMs: number | null;
  objectMs: number | null;
  /** The error code sent to the client, if any. */
  error: string | null;
}

export class RequestRecord {
  readonly requestId: string;
  readonly startedAt: number;
  model: string | null = null;
  hashMs: number | null = null;
  routed: Pick<Routed, "objectMs" | "fallback"> & { policy: string; reason: string } = {
    policy: "",
    reason: "",
    objectMs: null,
    fallback: null,
  };
  /** The origin tried last (the one that answered, if any did). */
  origin: string | null = null;
  attempts = 0;
  matchedTokens = 0;
  readonly failures: FailedAttempt[] = [];
  /** The body is still streaming: the log line is written when it ends, not by the middleware. */
  streaming = false;
  #decided = false;
  #outcome: RequestOutcome | null = null;
  #end: RequestEnd = {};
  #logged = false;

  constructor(requestId: string, startedAt: number) {
    this.requestId = requestId;
    this.startedAt = startedAt;
  }

  decided(routed: Routed): void {
    const { decision, objectMs, fallback } = routed;
    this.#decided = true;
    this.routed = { policy: decision.policy, reason: decision.reason, objectMs, fallback };
    this.matchedTokens = decision.matchedTokens;
  }

  /** The request ended this way; returns the sample for the pool's object. */
  settle(outcome: RequestOutcome, end: RequestEnd = {}): RequestSample {
    this.#outcome = outcome;
    this.#end = end;
    const moved = outcome === "failed" ? this.failures.slice(0, -1) : this.failures;
    return {
      origin: this.origin,
      outcome,
      failovers: moved,
      matchedTokens: this.matchedTokens,
      promptTokens: end.promptTokens,
      cachedTokens: end.cachedTokens,
      ttfbMs: end.ttfbMs,
      hashMs: this.hashMs ?? 0,
      objectMs: this.routed.objectMs,
      fallback: this.routed.fallback,
    };
  }

  line(status: number, error: string | null, now: number): RequestLogLine {
    const r = this.routed;
    return {
      msg: "llm_request",
      requestId: this.requestId,
      model: this.model,
      status,
      outcome: this.#outcome ?? "rejected",
      origin: this.origin,
      policy: this.#decided ? r.policy : null,
      reason: this.#decided ? r.reason : null,
      fallback: r.fallback !== null,
      matchedTokens: this.matchedTokens,
      promptTokens: this.#end.promptTokens ?? null,
      cachedTokens: this.#end.cachedTokens ?? null,
      ttfbMs: this.#end.ttfbMs ?? null,
      durationMs: Math.max(0, now - this.startedAt),
      attempts: this.attempts,
      failovers: Math.max(0, this.attempts - 1),
      failures: this.failures,
      hashMs: this.hashMs,
      objectMs: r.objectMs,
      error,
    };
  }

  /** Write the log line, once. */
  log(status: number, error: string | null, now: number): void {
    if (this.#logged) return;
    this.#logged = true;
    console.log(JSON.stringify(this.line(status, error, now)));
  }
}
