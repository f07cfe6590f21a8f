/**
 * One try of one origin, up to the first byte of its response body: the original request bytes
 * with the origin's headers, bounded by the pool's `firstByteTimeoutMs`. Returns the response
 * with its first body chunk already read, or why it failed before that byte (the only failures
 * failover may retry, the client having received nothing): no connection, no headers or no
 * first byte in time, a 3xx, a 5xx or a 429.
 *
 * The first body byte, not the headers, ends the wait because engines send their streaming
 * headers at once and the first chunk only after queueing and prefill (vLLM's and SGLang's
 * StreamingResponse): waiting for headers alone would leave prefill unbounded and let an origin
 * that answers headers and then stalls keep a request it will never serve.
 *
 * Redirects are not followed (following one would carry the origin's API key to wherever it
 * points) nor passed on (`Location` names an address behind the router): a 3xx is a failure.
 */
import type { FailureKind } from "../../core/router/router-types.ts";
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { originHeaders, originKey, originUrl } from "./origin-request.ts";
import { readWithin } from "./read-within.ts";

export interface AttemptRequest {
  readonly path: string;
  /** The URL the client asked for: its scheme and host become `X-Forwarded-Proto`/`-Host`. */
  readonly url: string;
  readonly headers: Headers;
  /** The client's bytes, or a P/D leg's body the router built (pd/leg-bodies.ts). */
  readonly body: ArrayBuffer | Uint8Array<ArrayBuffer> | string;
  readonly requestId: string;
  readonly timeoutMs: number;
  /** Headers the router sets itself, after the client's are filtered (llm-d's prefiller). */
  readonly routerHeaders?: Readonly<Record<string, string>> | undefined;
  /** Aborts the attempt (the other leg of a P/D pair failed); its result is then to be ignored. */
  readonly signal?: AbortSignal | undefined;
}

/** A response body whose first chunk has been read; the reader holds the rest. */
export interface StartedBody {
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly first: Uint8Array;
}

export type AttemptResult =
  | {
      readonly ok: true;
      readonly response: Response;
      /** Null when the response has no body bytes at all. */
      readonly body: StartedBody | null;
      readonly startedAt: number;
      /** Clock reading when the first body byte arrived, null if none did. */
      readonly firstByteAt: number | null;
    }
  | {
      readonly ok: false;
      readonly origin: string;
      readonly failure: FailureKind;
      /** Seconds from the origin's Retry-After, when it sent one with its 429 or 5xx. */
      readonly retryAfter: number | null;
    };

function retryAfterOf(response: Response): number | null {
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : null;
}

function statusFailure(status: number): FailureKind | null {
  if (status >= 300 && status < 400) return "status-3xx";
  if (status === 429) return "status-429";
  return status >= 500 ? "status-5xx" : null;
}

/** The first non-empty chunk within the deadline; null for a body that ended without one. */
async function firstChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  deadline: number,
): Promise<Uint8Array | null> {
  for (;;) {
    const read = await readWithin(reader, deadline - Date.now());
    if (read === null) throw new Error("no first byte in time");
    if (read.done) return null;
    if (read.value.byteLength > 0) return read.value;
  }
}

export async function attempt(
  env: Env,
  origin: OriginSettings,
  request: AttemptRequest,
): Promise<AttemptResult> {
  const headers = originHeaders(
    request.headers,
    originKey(env, origin),
    request.requestId,
    request.url,
  );
  for (const [name, value] of Object.entries(request.routerHeaders ?? {})) headers.set(name, value);
  const init: RequestInit = { method: "POST", headers, body: request.body, redirect: "manual" };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const abort = () => controller.abort();
  request.signal?.addEventListener("abort", abort, { once: true });
  const startedAt = Date.now();
  const failed = (failure: FailureKind, retryAfter: number | null = null): AttemptResult => ({
    ok: false,
    origin: origin.id,
    failure,
    retryAfter,
  });
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  try {
    const response = await fetch(originUrl(origin.url, request.path), {
      ...init,
      signal: controller.signal,
    });
    const failure = statusFailure(response.status);
    if (failure !== null) {
      // Free the connection: nothing of this body is passed on.
      response.body?.cancel().catch(() => undefined);
      return failed(failure, retryAfterOf(response));
    }
    reader = response.body?.getReader() ?? null;
    const first = reader && (await firstChunk(reader, startedAt + request.timeoutMs));
    const body = reader && first ? { reader, first } : null;
    return { ok: true, response, body, startedAt, firstByteAt: first ? Date.now() : null };
  } catch {
    const timedOut = controller.signal.aborted || Date.now() - startedAt >= request.timeoutMs;
    // Close the origin's connection: a late answer would find nobody reading it.
    controller.abort();
    reader?.cancel().catch(() => undefined);
    return failed(timedOut ? "timeout" : "connect");
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", abort);
  }
}
