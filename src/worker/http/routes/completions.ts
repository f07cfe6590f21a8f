/**
 * `POST /v1/chat/completions` and `POST /v1/completions`: OpenAI's two APIs on the one LLM
 * pipeline (../llm-api/llm-pipeline.ts), with their routing fields (validation/llm-request.ts)
 * and the canonical prompt of chat messages or a completions prompt.
 */
import { Hono } from "hono";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import { bearerCredential } from "../../access/client-access.ts";
import {
  chatRequest,
  completionRequest,
  type LlmRequest,
  validateLlmRequest,
} from "../../validation/llm-request.ts";
import type { LlmApi } from "../llm-api/llm-api.ts";
import { llmRoute } from "../llm-api/llm-pipeline.ts";
import type { AppEnv } from "../middleware/app-env.ts";

function openAiApi(
  name: "chat" | "completions",
  schema: typeof chatRequest | typeof completionRequest,
): LlmApi<LlmRequest> {
  return {
    name,
    credential: bearerCredential,
    validate: (json) => validateLlmRequest(json, schema),
    promptKey: (body, chunkBytes) => promptKey(body, chunkBytes),
    choices: (json) => (Number.isInteger(json.n) ? (json.n as number) : undefined),
    pdLegs: true,
  };
}

export const completionsRoutes = new Hono<AppEnv>()
  .post("/chat/completions", ...llmRoute(openAiApi("chat", chatRequest)))
  .post("/completions", ...llmRoute(openAiApi("completions", completionRequest)));
