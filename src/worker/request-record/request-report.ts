/**
 * @module
 * The one description of a finished request that the Worker sends to the pool's object with
 * `complete`: where it went, how it ended, each failed attempt, the engine's usage and the
 * object's round trip. The object takes everything it needs from it: the core's `Outcome` for
 * the router (`routerOutcome`, also what the isolate's fallback router is told) and the figures
 * of its metrics (`PoolMetrics`). Plain data, so it crosses Workers RPC as is; no prompt text,
 * no request id. The request log's line is written from the same record (request-record.ts).
 */
import type { EngineUsage, FailureKind, Outcome } from "../../core/router/router-types.ts";

/**
 * How a request ended, as the `outcome` label:
 * - ok:            an origin answered 2xx and the body reached the client in full;
 * - origin_status: an origin answered another status (e.g. the engine's 400), passed through;
 * - client_abort:  the client went away before the body ended;
 * - stream_error:  the origin broke its stream after the first byte, or let it stall;
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

/**
 * The API a request came in by, as the `api` label of metrics and log lines: OpenAI's chat and
 * completions, Anthropic's Messages, OpenAI's Responses.
 */
export const LLM_APIS = ["chat", "completions", "messages", "responses"] as const;
export type LlmApiName = (typeof LLM_APIS)[number];

/** An attempt that failed before its first byte. */
export interface FailedAttempt {
  readonly origin: string;
  readonly kind: FailureKind;
}

/**
 * The prefill leg of a disaggregated request whose decode leg took its KV (src/worker/pd/): its
 * origin, the prompt tokens it was believed to hold, and its engine's usage when it answered
 * (llm-d's sidecar answers none).
 */
export interface PrefillReport {
  readonly origin: string;
  readonly matchedTokens: number;
  readonly usage?: EngineUsage | undefined;
}

export interface RequestReport {
  /** The API it came in by; absent from an isolate of a version before the label (chat). */
  readonly api?: LlmApiName | undefined;
  /** The origin that answered, or the last one tried when none did. */
  readonly origin: string | null;
  readonly outcome: RequestOutcome;
  /** Every attempt that failed before its first byte, in order. */
  readonly failures: readonly FailedAttempt[];
  /** Prompt tokens the serving origin was believed to hold. */
  readonly matchedTokens: number;
  /** The engine's usage, when it reported one (never for a broken stream). */
  readonly promptTokens?: number | undefined;
  readonly cachedTokens?: number | undefined;
  /** Origin's first body byte after its request was sent. */
  readonly ttfbMs?: number | undefined;
  /**
   * The answer was an SSE stream, so its first byte came with its first token and `ttfbMs` is
   * the origin's time to first token (a whole JSON answer's first byte comes after its decode).
   */
  readonly streamed?: boolean | undefined;
  /** The `route` call's round trip to the object; null when the Worker routed alone. */
  readonly objectMs: number | null;
  /** `fallback-*` reason when the Worker routed alone, else null. */
  readonly fallback: string | null;
  /** The prefill leg whose KV the serving origin took, if the request was disaggregated. */
  readonly prefill?: PrefillReport | undefined;
  /** The client key's id (never the key), while client keys are enforced. */
  readonly keyId?: string | undefined;
}

/**
 * The failed attempts after which another origin was tried: all of them, unless no origin
 * answered, when the last one ended the request instead.
 */
export function failovers(report: RequestReport): readonly FailedAttempt[] {
  return report.outcome === "failed" ? report.failures.slice(0, -1) : report.failures;
}

/**
 * What the router learns from the request. Only an origin's own failure counts against it: the
 * last failed attempt when none answered, a broken or stalled stream; a client leaving or an
 * origin's 4xx is neither success nor failure. Usage teaches only on success, and a streamed
 * answer's first byte its origin's prefill speed (the core's `ttftMs`). A prefill leg
 * that answered says so whatever became of the decode (the core learns from its usage).
 */
export function routerOutcome(report: RequestReport): Outcome {
  const prefill = report.prefill?.usage;
  const outcome = ((): Outcome => {
    switch (report.outcome) {
      case "ok":
        return {
          ok: true,
          promptTokens: report.promptTokens,
          cachedTokens: report.cachedTokens,
          ...(report.streamed && report.ttfbMs !== undefined ? { ttftMs: report.ttfbMs } : {}),
        };
      case "stream_error":
        return { ok: false, failure: "stream" };
      case "failed":
        return { ok: false, failure: report.failures.at(-1)?.kind };
      case "origin_status":
      case "client_abort":
        return { ok: false };
    }
  })();
  return prefill === undefined ? outcome : { ...outcome, prefill };
}
