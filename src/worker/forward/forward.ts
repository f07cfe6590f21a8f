/**
 * Forwarding a routed request (docs/architecture.md, "One request", steps 5-6): try the chosen
 * origin, fail over to the decision's alternates within the pool's retry budget (before the first
 * byte only, with backoff), stream the answer back byte for byte with the `x-router-*` headers,
 * end it if the origin goes silent for the pool's `streamIdleTimeoutMs`, and report the outcome
 * to the router that issued the ticket once the body has ended or the client has left.
 * Every failed attempt moves the ticket with `reroute`, so the failed origin's load and circuit
 * change at once, before the next attempt is made. The request's `RequestRecord` learns each
 * attempt and the end, which gives the router its `RequestReport` and the log its line.
 */
import type { OriginSettings, PoolSettings } from "../../core/settings/settings-schema.ts";
import type { Routed } from "../edge-routing/route-request.ts";
import { ApiError } from "../errors/api-error.ts";
import type { RequestRecord } from "../request-record/request-record.ts";
import type { RequestOutcome } from "../request-record/request-report.ts";
import { type AttemptRequest, type AttemptResult, attempt } from "./attempt.ts";
import { clientHeaders } from "./origin-request.ts";
import { sseErrorEnding } from "./sse-ending.ts";
import { scanModeOf, UsageScanner } from "./usage-scanner.ts";
import { type BreakKind, type TapEnd, tapUsage } from "./usage-tap.ts";

type Failed = Extract<AttemptResult, { ok: false }>;

export interface ForwardInput {
  readonly env: Env;
  readonly ctx: Pick<ExecutionContext, "waitUntil">;
  readonly pool: PoolSettings;
  readonly routed: Routed;
  readonly request: Omit<AttemptRequest, "timeoutMs">;
  readonly record: RequestRecord;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function forward(input: ForwardInput): Promise<Response> {
  const { pool, routed, ctx, record } = input;
  const { decision, ledger } = routed;
  const ticket = decision.ticket;
  if (decision.origin === null || ticket === null) throw noEligibleOrigin(pool);
  const origins = new Map(pool.origins.map((o) => [o.id, o]));
  // Alternates the isolate's settings do not know (the object may hold newer ones) are skipped.
  const candidates = [decision.origin, ...decision.alternates]
    .map((id) => origins.get(id))
    .filter((o): o is OriginSettings => o !== undefined)
    .slice(0, pool.retry.maxAttempts);
  const request = { ...input.request, timeoutMs: pool.firstByteTimeoutMs };
  const failures: Failed[] = [];
  let matchedTokens = decision.matchedTokens;
  try {
    for (const [i, origin] of candidates.entries()) {
      if (i > 0) {
        const backoff = pool.retry.backoffMs * pool.retry.backoffMultiplier ** (i - 1);
        const [matched] = await Promise.all([
          ledger.reroute(ticket, failures[i - 1]!.failure, origin.id),
          sleep(backoff),
        ]);
        matchedTokens = matched ?? 0;
      }
      record.origin = origin.id;
      record.attempts = i + 1;
      record.matchedTokens = matchedTokens;
      const result = await attempt(input.env, origin, request);
      if (result.ok) {
        return respond(result, { origin: origin.id, attempts: i + 1, matchedTokens }, input);
      }
      failures.push(result);
      record.failures.push({ origin: origin.id, kind: result.failure });
    }
  } catch (error) {
    // A misconfigured origin (its key secret unset): release the lease, then report the error.
    ctx.waitUntil(ledger.cancel(ticket));
    throw error;
  }
  ctx.waitUntil(ledger.complete(ticket, record.finish("failed")));
  throw allFailed(failures);
}

interface Served {
  origin: string;
  attempts: number;
  /** Prompt tokens the serving origin was believed to hold (after any failover). */
  matchedTokens: number;
}

function respond(
  started: Extract<AttemptResult, { ok: true }>,
  served: Served,
  input: ForwardInput,
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
  // A Response built here does not carry headers Hono's middleware set on the context.
  headers.set("x-request-id", input.request.requestId);
  const init = { status: response.status, statusText: response.statusText, headers };
  const ttfbMs = started.firstByteAt === null ? undefined : started.firstByteAt - started.startedAt;
  const complete = (end: TapEnd) => {
    // A broken stream's usage, if any came, is not the engine's account of a finished request.
    const usage = broken(end) ? {} : end.usage;
    const report = input.record.finish(requestOutcome(end, response.status), { ...usage, ttfbMs });
    return ledger.complete(ticket, report);
  };
  if (!body) {
    input.ctx.waitUntil(complete({ kind: "end", usage: {} }));
    return new Response(null, init);
  }
  const mode = scanModeOf(response.headers.get("content-type"));
  const idleMs = input.pool.streamIdleTimeoutMs;
  const ending = (kind: BreakKind, atBoundary: boolean) =>
    sseErrorEnding(errorCode(kind), errorMessage(kind, idleMs), atBoundary);
  const { stream, ended } = tapUsage(body.reader, body.first, new UsageScanner(mode), {
    idleMs,
    ending: mode === "sse" ? ending : null,
  });
  input.record.streaming = true;
  input.ctx.waitUntil(
    ended.then((end) => {
      const recorded = complete(end);
      input.record.log(response.status, broken(end) ? errorCode(end.kind) : null, Date.now());
      return recorded;
    }),
  );
  return new Response(stream, init);
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

function noEligibleOrigin(pool: PoolSettings): ApiError {
  return new ApiError(
    503,
    "server_error",
    "no_eligible_origin",
    "no origin of this model is available",
    { headers: { "retry-after": String(Math.ceil(pool.circuit.cooldownMs / 1000)) } },
  );
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
