/**
 * The one pipeline of every LLM route (docs/architecture.md, "One request"): the client key
 * and its request rate (when every pool needs a key), body limit, headers the origin can take,
 * the body's structural budget and JSON, then the handler: the API validates its routing
 * fields, the key if the model's pool needs one and it was not checked yet, check the key may
 * use the model, find the pool, hash the prompt here at the edge, spend the key's prompt-token
 * budget (settled at the engine's count when the answer ends), ask the pool's front for a
 * decision (coordination/front.ts: the pool's object or the fallback, or in an edge-coordinated
 * pool this isolate's replica), forward the original bytes (a disaggregated request: two legs,
 * src/worker/pd/). What differs between APIs is the `LlmApi` it is given.
 */
import type { MiddlewareHandler } from "hono";
import { ANONYMOUS_KEY } from "../../../core/admission/admission.ts";
import type { Priority } from "../../../core/route-request.ts";
import { checkModel, keyFor, routeClient, spendPromptTokens } from "../../access/client-access.ts";
import { frontFor } from "../../coordination/front.ts";
import { invalidRequest, modelNotFound } from "../../errors/api-error.ts";
import type { Answered } from "../../forward/failover.ts";
import { forward } from "../../forward/forward.ts";
import { checkForwardedHeaders } from "../../forward/origin-request.ts";
import type { ColoProperties } from "../../objects/colo-group.ts";
import { disaggregate } from "../../pd/disaggregate.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import { checkJsonBudget } from "../../validation/llm-request.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { limitBody, tooLarge } from "../middleware/body-limit.ts";
import { admitKey, clientKey } from "../middleware/client-key.ts";
import { type JsonBodyEnv, jsonBody } from "../middleware/json-body.ts";
import { requestLog } from "../middleware/request-log.ts";
import type { LlmApi, RoutingFields } from "./llm-api.ts";

/** Optional affinity key: requests with the same value share an origin under prefix policies. */
const SESSION_HEADER = "x-router-session";
/** The request's class of service for the pool's admission: `interactive` (default) or `batch`. */
const PRIORITY_HEADER = "x-router-priority";

function priorityOf(value: string | undefined): Priority {
  if (value === undefined || value === "interactive" || value === "batch") {
    return value ?? "interactive";
  }
  throw invalidRequest(
    "invalid_priority",
    `${PRIORITY_HEADER} must be interactive or batch, got "${value.slice(0, 32)}"`,
    PRIORITY_HEADER,
  );
}
const BODY = "request body";

/** A 400 for an API whose requests a pool of P/D origins cannot serve (`LlmApi.pdLegs`). */
function pdUnsupported(path: string) {
  return invalidRequest(
    "pd_unsupported",
    `${path} is not served by a pool with prefill/decode origins: its legs speak chat and completions only; send the request to /v1/chat/completions`,
    "model",
  );
}

/**
 * The steps before the handler of `api`'s route, in order; per route, not `.use()`, which
 * would cover all /v1.
 */
export const llmSteps = (api: Pick<LlmApi, "name" | "credential">) =>
  [
    requestLog(api.name),
    // Key and request rate before the body is read when every pool needs a key (src/worker/access/).
    clientKey({ credential: api.credential }),
    // The largest pool's limit applies until the model, and with it the pool, is known.
    limitBody({ maxBytes: async (c) => (await currentSettings(c.env)).maxBodyBytes, what: BODY }),
    async function forwardableHeaders(c, next) {
      checkForwardedHeaders(c.req.raw.headers);
      await next();
    } satisfies MiddlewareHandler<AppEnv>,
    jsonBody({ what: BODY, precheck: checkJsonBudget, object: true }),
  ] as const;

/** The handler after `llmSteps` for `api`'s requests. */
export function llmHandler<Body extends RoutingFields>(
  api: LlmApi<Body>,
): MiddlewareHandler<AppEnv & JsonBodyEnv> {
  return async function llmRequest(c) {
    const record = c.get("record");
    const settings = await currentSettings(c.env);
    const json = c.get("json") as Record<string, unknown>;
    const body = api.validate(json);
    record.model = body.model;
    // Keys of pools that need one when not every pool does (the middleware did the rest), or
    // a 403 for a pool that is not open and no key names; only for pools that exist, so
    // made-up models cost no KV read. Both coordination modes pass here before routing.
    let client = c.get("client");
    const pool = settings.pool(body.model);
    if (!client && pool) {
      const now = Date.now();
      const credential = api.credential(c.req.raw.headers);
      const { sendAs } = api.credential;
      client = await keyFor(c.env, body.model, pool.access, credential, now, sendAs);
      if (client) await admitKey(c.env, record, client, now);
    }
    if (client) checkModel(client, body.model);
    if (!pool) throw modelNotFound(body.model);
    if (!api.pdLegs && pool.origins.some((o) => o.role !== "both")) throw pdUnsupported(c.req.path);
    // The bytes jsonBody read: the origin receives exactly what the client sent.
    const bytes = await c.req.arrayBuffer();
    if (bytes.byteLength > pool.maxBodyBytes) throw tooLarge(BODY, pool.maxBodyBytes);
    // Hashing is pure CPU, which Workers' clocks do not show (they move only across I/O):
    // `npm run bench:core` measures it.
    const key = api.promptKey(body, pool.chunkBytes);
    // Spent before the request goes, so at bytes / 4 (the router has not answered with the
    // pool's learned ratio), then settled at the engine's count once it reports one (`counted`).
    // A Responses follow-up spends its new items and is settled at the whole stored
    // conversation the engine prefilled, as OpenAI bills it.
    const settle = client ? spendPromptTokens(client, key.promptTokens, Date.now()) : undefined;
    const ref = { model: body.model, pool, version: settings.version(body.model) };
    // A keyed request's fair share is its key's; its priority its key's, or lower (routeClient).
    const priority = priorityOf(c.req.header(PRIORITY_HEADER));
    // A Responses follow-up goes where its stored response lives (stored-responses/).
    const continues = api.continues?.(body);
    const routeInput = {
      chunkHashes: key.chunkHashes,
      promptTokens: key.promptTokens,
      // The router re-derives prompt tokens from the bytes at its pool's learned bytes per token
      // (router/bytes-per-token.ts) and learns that ratio from the engine's prompt_tokens. Not
      // for a follow-up: its bytes are its new items only, its engine's prompt tokens the whole
      // stored conversation, and each one would pull the ratio down.
      promptBytes: continues === undefined ? key.byteLength : undefined,
      sessionKey: c.req.header(SESSION_HEADER),
      // Several choices are never disaggregated; the engine checks `n` itself.
      n: api.choices(json),
      client: client ? routeClient(client, priority) : { key: ANONYMOUS_KEY, priority },
    };
    // Edge pools decide in this isolate, with no call before the origin fetch (but the
    // isolate's first, which waits for the pool's summary). Pools with admission may hold the
    // request, in the object or in this isolate, under a name the router makes (`waiter`: its
    // client's abort signal, to leave the queue by).
    const waiter = { signal: c.req.raw.signal };
    const front = frontFor(c.env, ref);
    const options = { ctx: c.executionCtx, cf: c.req.raw.cf as ColoProperties | undefined, waiter };
    const routed =
      continues !== undefined
        ? await front.routeStored(continues, routeInput, options)
        : await front.route(routeInput, options);
    record.decided(routed);
    const input = {
      env: c.env,
      ctx: c.executionCtx,
      pool,
      routed,
      request: {
        path: c.req.path,
        url: c.req.url,
        headers: c.req.raw.headers,
        body: bytes,
        requestId: c.get("requestId"),
      },
      json,
      record,
      answered:
        api.answered &&
        ((answer: Answered) =>
          api.answered?.(body, answer, { env: c.env, ctx: c.executionCtx, ref })),
      counted: settle && ((promptTokens: number) => settle(promptTokens, Date.now())),
    };
    // A decision with a prefill origin takes two legs (src/worker/pd/); any other, one origin.
    return routed.decision.prefill ? disaggregate(input) : forward(input);
  };
}

/** The steps and the handler of one LLM route, to spread into `app.post(path, ...)`. */
export function llmRoute<Body extends RoutingFields>(api: LlmApi<Body>) {
  return [...llmSteps(api), llmHandler(api)] as const;
}
