/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens`: Anthropic's Messages API on the one
 * LLM pipeline (../llm-api/llm-pipeline.ts), for the coding agents that speak it (Claude Code).
 * A message is routed by the prefix of its canonical prompt (src/core/prompt/messages-prompt.ts:
 * tools, system, then the turns), so each turn of a conversation lands where the last one
 * left its KV cache; the origin's own `/v1/messages` gets the client's bytes and the answer
 * streams back untouched, its usage read by the same scanner as chat's (`input_tokens` plus the
 * cache fields). `anthropic-version` and `anthropic-beta` pass through to the origin as any
 * header the router does not own; the client's `x-api-key`, like its `Authorization`, never
 * does, and the origin gets its own key as `Authorization: Bearer`, the one header both
 * engines serving this API read: vLLM's AuthenticationMiddleware checks only `Authorization`
 * on every route, `/v1/messages` included (vllm/entrypoints/anthropic/api_router.py is mounted
 * on the main app), and llama.cpp's server takes it beside `X-Api-Key`.
 *
 * A token count asks the engine to tokenise, not to prefill: it is routed with no prompt
 * hashes (the index learns nothing from it, and no origin is believed to hold it) to an
 * eligible origin of the pool, with failover, budgets and admission as any request. Errors
 * take Anthropic's shape (../on-error.ts). Pools with P/D origins refuse both (`pdLegs`).
 */
import { Hono } from "hono";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import { anthropicCredential } from "../../access/client-access.ts";
import { validateLlmRequest } from "../../validation/llm-request.ts";
import {
  countTokensRequest,
  type MessagesRequest,
  messagesRequest,
} from "../../validation/messages-request.ts";
import type { LlmApi } from "../llm-api/llm-api.ts";
import { llmRoute } from "../llm-api/llm-pipeline.ts";
import type { AppEnv } from "../middleware/app-env.ts";

const messagesApi: LlmApi<MessagesRequest> = {
  name: "messages",
  credential: anthropicCredential,
  validate: (json) => validateLlmRequest(json, messagesRequest),
  promptKey: (body, chunkBytes) => promptKey(body, chunkBytes, "messages"),
  choices: () => undefined,
  pdLegs: false,
};

const countTokensApi: LlmApi<MessagesRequest> = {
  ...messagesApi,
  validate: (json) => validateLlmRequest(json, countTokensRequest),
  promptKey: () => ({ chunkHashes: [], byteLength: 0, promptTokens: 0 }),
};

export const messagesRoutes = new Hono<AppEnv>()
  .post("/messages", ...llmRoute(messagesApi))
  .post("/messages/count_tokens", ...llmRoute(countTokensApi));
