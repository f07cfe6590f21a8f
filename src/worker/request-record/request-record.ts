/**
 * @module
 * What the router did with one LLM request, filled in as the request goes (routing decides,
 * forward tries origins) and finished once: the `RequestReport` the pool's object receives, and
 * one JSON log line through `console.log`, which Workers Logs and Logpush collect. The line is
 * the report's figures plus what only the log needs (request id, model, status, decision,
 * duration, error); it never holds prompt text, origin URLs, headers or secrets (docs/api.md
 * lists its fields).
 */

import type { Priority } from "../../core/route-request.ts";
import type { RouteDecision } from "../../core/router/router-types.ts";
import type { Coordination } from "../../core/settings/edge-settings.ts";
import type {
  FailedAttempt,
  LlmApiName,
  PrefillReport,
  RequestOutcome,
  RequestReport,
} from "./request-report.ts";

export interface RequestLogLine {
  msg: "llm_request";
  requestId: string;
  /** The API the request came in by (`chat`, `completions`, `messages`, `responses`). */
  api: LlmApiName;
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
  failures: readonly FailedAttempt[];
  objectMs: number | null;
  /** Who decided: the pool's object (or the fallback), or this isolate's replica (`edge`). */
  coordination: Coordination;
  /** Edge mode: age of the replica's view when it decided (ms since its last sync answer). */
  viewAgeMs: number | null;
  /** The error code sent to the client, if any. */
  error: string | null;
  /** The client key's id (never the key) and priority; null while keys are not enforced. */
  keyId: string | null;
  priority: Priority | null;
  /** In a P/D pool: how it was served (`x-router-pd`: remote, local-cached, prefill-failed...). */
  pd: string | null;
  /** The prefill origin whose KV the answer came from, and its engine's cached tokens. */
  prefillOrigin: string | null;
  prefillCachedTokens: number | null;
}

/** A decision and how it was reached (coordination's `Routed` is one). */
export interface DecidedBy {
  readonly decision: RouteDecision;
  readonly objectMs: number | null;
  readonly fallback: string | null;
  readonly coordination: Coordination;
  readonly viewAgeMs: number | null;
}

export class RequestRecord {
  readonly requestId: string;
  readonly startedAt: number;
  readonly api: LlmApiName;
  model: string | null = null;
  /** The decision's policy and reason; null until routing has decided. */
  decision: { policy: string; reason: string } | null = null;
  objectMs: number | null = null;
  fallback: string | null = null;
  coordination: Coordination = "object";
  viewAgeMs: number | null = null;
  /** The origin tried last (the one that answered, if any did). */
  origin: string | null = null;
  attempts = 0;
  matchedTokens = 0;
  readonly failures: FailedAttempt[] = [];
  /** In a P/D pool, how the request is served: `x-router-pd`'s value; null elsewhere. */
  pd: string | null = null;
  /** The prefill leg whose KV the serving origin takes, once it answered (src/worker/pd/). */
  prefill: PrefillReport | null = null;
  /** Who sent it, once its client key is checked (null while keys are not enforced). */
  client: { keyId: string; priority: Priority } | null = null;
  /** The body is still streaming: the log line is written when it ends, not by the middleware. */
  streaming = false;
  #report: RequestReport | null = null;
  #logged = false;

  constructor(requestId: string, startedAt: number, api: LlmApiName) {
    this.requestId = requestId;
    this.startedAt = startedAt;
    this.api = api;
  }

  identified(keyId: string, priority: Priority): void {
    this.client = { keyId, priority };
  }

  decided({ decision, objectMs, fallback, coordination, viewAgeMs }: DecidedBy): void {
    this.decision = { policy: decision.policy, reason: decision.reason };
    this.objectMs = objectMs;
    this.fallback = fallback;
    this.coordination = coordination;
    this.viewAgeMs = viewAgeMs;
    this.matchedTokens = decision.matchedTokens;
    this.pd = decision.pdReason?.slice("pd:".length) ?? null;
  }

  /**
   * The origin failed before its first byte and another is tried, alone: a prefill leg's KV
   * goes unused (the core's `reroute` ends it).
   */
  rerouted(): void {
    if (this.pd === "remote") this.pd = "decode-failed";
    this.prefill = null;
  }

  /**
   * The request ended this way (`end`: the engine's usage and the first byte's time, when the
   * response began); returns the report for the pool's object.
   */
  finish(
    outcome: RequestOutcome,
    end: Pick<RequestReport, "promptTokens" | "cachedTokens" | "ttfbMs" | "streamed"> = {},
  ): RequestReport {
    this.#report = {
      api: this.api,
      origin: this.origin,
      outcome,
      failures: [...this.failures],
      matchedTokens: this.matchedTokens,
      promptTokens: end.promptTokens,
      cachedTokens: end.cachedTokens,
      ttfbMs: end.ttfbMs,
      ...(end.streamed ? { streamed: true } : {}),
      objectMs: this.objectMs,
      fallback: this.fallback,
      ...(this.prefill ? { prefill: this.prefill } : {}),
      ...(this.client ? { keyId: this.client.keyId } : {}),
    };
    return this.#report;
  }

  line(status: number, error: string | null, now: number): RequestLogLine {
    const report = this.#report;
    return {
      msg: "llm_request",
      requestId: this.requestId,
      api: this.api,
      model: this.model,
      status,
      outcome: report?.outcome ?? "rejected",
      origin: this.origin,
      policy: this.decision?.policy ?? null,
      reason: this.decision?.reason ?? null,
      fallback: this.fallback !== null,
      matchedTokens: this.matchedTokens,
      promptTokens: report?.promptTokens ?? null,
      cachedTokens: report?.cachedTokens ?? null,
      ttfbMs: report?.ttfbMs ?? null,
      durationMs: Math.max(0, now - this.startedAt),
      attempts: this.attempts,
      failovers: Math.max(0, this.attempts - 1),
      failures: this.failures,
      objectMs: this.objectMs,
      coordination: this.coordination,
      viewAgeMs: this.viewAgeMs,
      error,
      keyId: this.client?.keyId ?? null,
      priority: this.client?.priority ?? null,
      pd: this.pd,
      prefillOrigin: report?.prefill?.origin ?? null,
      prefillCachedTokens: report?.prefill?.usage?.cachedTokens ?? null,
    };
  }

  /** Write the log line, once. */
  log(status: number, error: string | null, now: number): void {
    if (this.#logged) return;
    this.#logged = true;
    console.log(JSON.stringify(this.line(status, error, now)));
  }
}
