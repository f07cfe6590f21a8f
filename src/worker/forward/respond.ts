/**
 * The answer of an origin that sent its first byte (docs/architecture.md, "One request", step 6):
 * streamed back byte for byte with the `x-router-*` headers, ended if the origin goes silent for
 * the pool's `streamIdleTimeoutMs`, and reported to the router that issued the ticket (and its
 * engine's prompt count to the key's budget: `ForwardInput.counted`) once the body has ended or
 * the client has left. And the error when no origin answered.
 */
import { ApiError } from "../errors/api-error.ts";
import type { RequestOutcome } from "../request-record/request-report.ts";
import type { Failed, ForwardInput, Served, Started } from "./failover.ts";
import { clientHeaders } from "./origin-request.ts";
import { anthropicSseErrorEnding, sseErrorEnding } from "./sse-ending.ts";
import { scanModeOf, UsageScanner } from "./usage-scanner.ts";
import { type BreakKind, type TapEnd, tapUsage } from "./usage-tap.ts";

export interface RespondOptions {
  /** The prefill origin whose KV the answer came from (a disaggregated request). */
  readonly prefillOrigin?: string | null;
  /** Settles when everything else the request waits on has (a P/D prefill leg being drained). */
  readonly settled?: Promise<unknown>;
}

export function respond(
  started: Started,
  served: Served,
  input: ForwardInput,
  options: RespondOptions = {},
): Response {
  const { response, body } = started;
  const { decision, ledger } = input.routed;
  const ticket = decision.ticket as string;
  const headers = clientHeaders(response.headers);
  headers.set("x-router-origin", served.origin);
  headers.set("x-router-policy", decision.policy);
  headers.set("x-router-reason", decision.reason);
  headers.set("x-router-matched-tokens", String(served.matchedTokens));
  headers.set("x-router-attempts", String(served.attempts));
  // In a P/D pool: how the request was served (record.pd), and with whose prefill.
  if (input.record.pd !== null) headers.set("x-router-pd", input.record.pd);
  if (options.prefillOrigin) headers.set("x-router-prefill-origin", options.prefillOrigin);
  // A Response built here does not carry headers Hono's middleware set on the context.
  headers.set("x-request-id", input.request.requestId);
  const init = { status: response.status, statusText: response.statusText, headers };
  const ttfbMs = started.firstByteAt === null ? undefined : started.firstByteAt - started.startedAt;
  const mode = scanModeOf(response.headers.get("content-type"));
  // An SSE answer's first byte is its first token: the router learns prefill speed from it.
  const streamed = Boolean(body) && mode === "sse";
  // The report, then (when the middleware will not) the log line, then the router is told.
  const finish = (end: TapEnd, log: boolean) => {
    // A broken stream's usage, if any came, is not the engine's account of a finished request.
    const usage = broken(end) ? {} : end.usage;
    if (end.kind === "end") {
      input.answered?.({ origin: served.origin, status: response.status, usage: end.usage });
    }
    const ok = response.status >= 200 && response.status < 300;
    if (ok && usage.promptTokens !== undefined) input.counted?.(usage.promptTokens);
    const report = input.record.finish(requestOutcome(end, response.status), {
      ...usage,
      ttfbMs,
      streamed,
    });
    if (log)
      input.record.log(response.status, broken(end) ? errorCode(end.kind) : null, Date.now());
    return ledger.complete(ticket, report);
  };
  const { settled } = options;
  const after = (run: () => Promise<void>) =>
    settled ? settled.catch(() => undefined).then(run) : run();
  if (!body) {
    // Waiting on a P/D leg, the report comes after the middleware's log line: log it here.
    input.record.streaming = settled !== undefined;
    input.ctx.waitUntil(after(() => finish({ kind: "end", usage: {} }, settled !== undefined)));
    return new Response(null, init);
  }
  const idleMs = input.pool.streamIdleTimeoutMs;
  // Each API's stream ends in its own error event (sse-ending.ts).
  const ending = (kind: BreakKind, atBoundary: boolean) =>
    input.record.api === "messages"
      ? anthropicSseErrorEnding(errorMessage(kind, idleMs), atBoundary)
      : sseErrorEnding(errorCode(kind), errorMessage(kind, idleMs), atBoundary);
  const { stream, ended } = tapUsage(body.reader, body.first, new UsageScanner(mode), {
    idleMs,
    ending: mode === "sse" ? ending : null,
  });
  input.record.streaming = true;
  input.ctx.waitUntil(ended.then((end) => after(() => finish(end, true))));
  return new Response(stream, init);
}

/** No origin answered: the report says so, and the client gets 502 (or 503 when all were busy). */
export function failAll(input: ForwardInput, failures: readonly Failed[]): never {
  const ticket = input.routed.decision.ticket as string;
  input.ctx.waitUntil(input.routed.ledger.complete(ticket, input.record.finish("failed")));
  throw allFailed(failures);
}

function broken(end: TapEnd): end is TapEnd & { kind: BreakKind } {
  return end.kind === "origin-error" || end.kind === "idle-timeout";
}

/** The error code a broken or stalled stream ends with (its SSE error event, the log line). */
function errorCode(kind: BreakKind): string {
  return kind === "idle-timeout" ? "stream_idle_timeout" : "origin_stream_error";
}

function errorMessage(kind: BreakKind, idleMs: number): string {
  return kind === "idle-timeout"
    ? `the origin sent nothing for ${idleMs} ms; the response was ended`
    : "the origin's stream broke mid-response";
}

function requestOutcome(end: TapEnd, status: number): RequestOutcome {
  if (broken(end)) return "stream_error";
  if (end.kind === "client-abort") return "client_abort";
  return status >= 200 && status < 300 ? "ok" : "origin_status";
}

/** 503 with the origins' own Retry-After when every one was busy (429); else 502. */
function allFailed(failures: readonly Failed[]): ApiError {
  const summary = failures.map((f) => `${f.origin}: ${f.failure}`).join(", ");
  const message = `all ${failures.length} attempts failed (${summary})`;
  if (failures.length > 0 && failures.every((f) => f.failure === "status-429")) {
    const retryAfter = Math.max(1, ...failures.map((f) => f.retryAfter ?? 1));
    return new ApiError(503, "server_error", "origins_overloaded", message, {
      headers: { "retry-after": String(retryAfter) },
    });
  }
  return new ApiError(502, "server_error", "origins_failed", message);
}
