/**
 * What an LLM API brings to the one pipeline every LLM route runs (llm-pipeline.ts): how its
 * body's routing fields are checked, how its prompt becomes a routing key, and the other
 * points where APIs differ. Everything else (key, limits, budget, priority, routing,
 * forwarding) is the pipeline's, the same for every API.
 */
import type { PromptKey } from "../../../core/prompt/prompt-key.ts";

/** The routing fields every API's validated body has. */
export interface RoutingFields {
  readonly model: string;
}

export interface LlmApi<Body extends RoutingFields = RoutingFields> {
  /** The routing fields of a parsed body, or the 400 (an ApiError) naming the first bad one. */
  validate(json: Record<string, unknown>): Body;
  /** The routing key of the canonical prompt, in chunks of `chunkBytes`. */
  promptKey(body: Body, chunkBytes: number): PromptKey;
  /** Choices the request asks for (OpenAI's `n`), when the API has them. */
  choices(json: Record<string, unknown>): number | undefined;
}
