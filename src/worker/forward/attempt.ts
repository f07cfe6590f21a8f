/**
 * One try of one origin, up to its response headers: the original request bytes with the
 * origin's headers, bounded by the pool's `firstByteTimeoutMs`. Returns the response, or why
 * it failed before its first byte (the only failures failover may retry): no connection, no
 * headers in time, a 5xx or a 429. Redirects are not followed: following one would carry the
 * origin's API key to wherever the redirect points.
 */
import type { FailureKind } from "../../core/router/router-types.ts";
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { originHeaders, originKey, originUrl } from "./origin-request.ts";

export interface AttemptRequest {
  readonly path: string;
  readonly headers: Headers;
  readonly body: ArrayBuffer;
  readonly requestId: string;
  readonly timeoutMs: number;
}

export type AttemptResult =
  | { readonly ok: true; readonly response: Response; readonly startedAt: number }
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

export async function attempt(
  env: Env,
  origin: OriginSettings,
  request: AttemptRequest,
): Promise<AttemptResult> {
  const init: RequestInit = {
    method: "POST",
    headers: originHeaders(request.headers, originKey(env, origin), request.requestId),
    body: request.body,
    redirect: "manual",
  };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const startedAt = Date.now();
  const failed = (failure: FailureKind, retryAfter: number | null = null): AttemptResult => ({
    ok: false,
    origin: origin.id,
    failure,
    retryAfter,
  });
  try {
    const response = await fetch(originUrl(origin.url, request.path), {
      ...init,
      signal: controller.signal,
    });
    if (response.status === 429 || response.status >= 500) {
      // Free the connection: nothing of this body is passed on.
      response.body?.cancel().catch(() => undefined);
      return failed(response.status === 429 ? "status-429" : "status-5xx", retryAfterOf(response));
    }
    return { ok: true, response, startedAt };
  } catch {
    return failed(controller.signal.aborted ? "timeout" : "connect");
  } finally {
    clearTimeout(timer);
  }
}
