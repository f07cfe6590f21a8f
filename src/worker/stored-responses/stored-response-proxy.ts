/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE
 * /v1/responses/{id}` (docs/api.md, "Stored responses"): sent to the origin that stored the
 * response, found in the pool objects of the models the client may use (these requests name
 * no model, so each such pool is asked, at once). A DELETE the origin accepts makes the router
 * forget the id too. No failover (only that origin holds it) and no usage: the origin's answer
 * goes back as it came, but for the router's headers.
 */
import type { StoredResponse } from "../../core/responses/stored-responses.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { mayUse } from "../access/client-access.ts";
import type { ClientKeyRecord } from "../access/key-record.ts";
import { ApiError } from "../errors/api-error.ts";
import { clientHeaders, originHeaders, originKey, originUrl } from "../forward/origin-request.ts";
import { type PoolRef, poolStub } from "../objects/pool-stub.ts";
import { withDeadline } from "../objects/with-deadline.ts";
import { currentSettings } from "../settings/settings-cache.ts";
import { RESPONSE_ID } from "../validation/responses-request.ts";
import { responseNotFound } from "./stored-response-errors.ts";

export interface StoredResponseCall {
  readonly env: Env;
  readonly ctx: Pick<ExecutionContext, "waitUntil">;
  readonly id: string;
  readonly method: "GET" | "DELETE";
  /** The path and query the client asked for: the origin gets the same. */
  readonly path: string;
  readonly url: string;
  readonly headers: Headers;
  readonly requestId: string;
  /** The client's key, if it presented one; open pools serve anyone. */
  readonly client: ClientKeyRecord | null;
  /** Whether `model`'s pool is open to anyone (`access: "open"` and no key names it). */
  readonly isOpen: (model: string, pool: PoolSettings) => Promise<boolean>;
}

export async function storedResponseRequest(call: StoredResponseCall): Promise<Response> {
  const { env, id } = call;
  if (!RESPONSE_ID.test(id)) throw responseNotFound(id.slice(0, 64));
  const found = await findStored(call);
  if (!found) throw responseNotFound(id);
  const { ref, stored } = found;
  const origin = ref.pool.origins.find((o) => o.id === stored.origin);
  if (!origin) throw responseNotFound(id);
  const headers = originHeaders(call.headers, originKey(env, origin), call.requestId, call.url);
  // The pool's first-byte timeout bounds the wait for headers only: a GET with `stream=true`
  // (vLLM resumes a background response's events so) may then stream for as long as it runs.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ref.pool.firstByteTimeoutMs);
  let answer: Response;
  try {
    answer = await fetch(originUrl(origin.url, call.path), {
      method: call.method,
      headers,
      redirect: "manual",
      signal: controller.signal,
    });
  } catch {
    throw new ApiError(502, "server_error", "origin_failed", "the origin that stored it failed");
  } finally {
    clearTimeout(timer);
  }
  if (answer.status >= 300 && answer.status < 400) {
    await answer.body?.cancel();
    throw new ApiError(502, "server_error", "origin_failed", "the origin redirected");
  }
  if (call.method === "DELETE" && answer.ok) {
    const stub = poolStub(env, ref);
    call.ctx.waitUntil(stub.forgetResponse(id, ref.pool.storedResponses).catch(() => false));
  }
  const out = clientHeaders(answer.headers);
  out.set("x-router-origin", origin.id);
  out.set("x-request-id", call.requestId);
  return new Response(answer.body, { status: answer.status, headers: out });
}

/** The pool and entry of `id`, among the pools the client may use; null when none knows it. */
async function findStored(
  call: StoredResponseCall,
): Promise<{ ref: PoolRef; stored: StoredResponse } | null> {
  const settings = await currentSettings(call.env);
  const pools = Object.entries(settings.settings.pools);
  const asked = await Promise.all(
    pools.map(async ([model, pool]) => {
      const allowed =
        (call.client !== null && mayUse(call.client, model)) || (await call.isOpen(model, pool));
      if (!allowed) return null;
      const ref = { model, pool, version: settings.version(model) };
      const lookup = poolStub(call.env, ref).storedResponse(call.id, pool.storedResponses);
      const stored = await withDeadline(lookup, pool.routeTimeoutMs).catch(() => null);
      return stored ? { ref, stored } : null;
    }),
  );
  return asked.find((hit) => hit !== null) ?? null;
}
