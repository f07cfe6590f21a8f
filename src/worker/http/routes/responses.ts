/**
 * OpenAI's Responses API (docs/api.md, "Responses"): `POST /v1/responses` on the one LLM
 * pipeline (../llm-api/llm-pipeline.ts) with its routing fields (validation/responses-request.ts)
 * and its canonical prompt (`instructions`, `tools`, `input` items: core/prompt); a request
 * with a `previous_response_id` goes to the origin that stored that response, and an answer
 * the client asked to store (`store`, true unless false) is remembered where it was made
 * (src/worker/stored-responses/). `GET` and `DELETE /v1/responses/{id}` and `GET
 * /v1/responses/{id}/input_items` go to the origin that stored it, counted against the key's
 * request rate as any request.
 *
 * Disaggregated pools are refused (`pdLegs: false`): their prefill and decode legs are built as
 * chat or completions bodies (pd/leg-bodies.ts), and a Responses body cannot be split into them.
 */
import { type Context, Hono } from "hono";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import {
  authenticate,
  bearerCredential,
  enforcedEverywhere,
  isOpen,
  presentedKey,
} from "../../access/client-access.ts";
import { rememberResponse } from "../../stored-responses/remember-response.ts";
import { storedResponseRequest } from "../../stored-responses/stored-response-proxy.ts";
import { validateLlmRequest } from "../../validation/llm-request.ts";
import { type ResponsesRequest, responsesRequest } from "../../validation/responses-request.ts";
import type { LlmApi } from "../llm-api/llm-api.ts";
import { llmRoute } from "../llm-api/llm-pipeline.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { admitKey } from "../middleware/client-key.ts";
import { requestLog } from "../middleware/request-log.ts";

const responsesApi: LlmApi<ResponsesRequest> = {
  name: "responses",
  credential: bearerCredential,
  pdLegs: false,
  validate: (json) => validateLlmRequest(json, responsesRequest),
  promptKey: (body, chunkBytes) => promptKey(body, chunkBytes, "responses"),
  choices: () => undefined,
  continues: (body) => body.previous_response_id ?? undefined,
  answered(body, answer, { env, ctx, ref }) {
    const id = answer.usage.responseId;
    if (body.store === false || id === undefined || answer.status !== 200) return;
    rememberResponse(env, ctx, ref, id, answer.origin);
  },
};

async function storedResponse(c: Context<AppEnv>, method: "GET" | "DELETE") {
  const now = Date.now();
  const authorization = c.req.header("authorization");
  const client = (await enforcedEverywhere(c.env, now))
    ? await authenticate(c.env, authorization, now)
    : await presentedKey(c.env, authorization, now);
  // Counted against its key's request rate like any request (and logged with its key).
  if (client) await admitKey(c.env, c.get("record"), client, now);
  const url = new URL(c.req.url);
  return storedResponseRequest({
    env: c.env,
    ctx: c.executionCtx,
    id: c.req.param("id") ?? "",
    method,
    path: url.pathname + url.search,
    url: c.req.url,
    headers: c.req.raw.headers,
    requestId: c.get("requestId"),
    client,
    isOpen: (model, pool) => isOpen(c.env, model, pool.access, now),
  });
}

export const responsesRoutes = new Hono<AppEnv>()
  .post("/responses", ...llmRoute(responsesApi))
  .get("/responses/:id", requestLog("responses"), (c) => storedResponse(c, "GET"))
  .get("/responses/:id/input_items", requestLog("responses"), (c) => storedResponse(c, "GET"))
  .delete("/responses/:id", requestLog("responses"), (c) => storedResponse(c, "DELETE"));
