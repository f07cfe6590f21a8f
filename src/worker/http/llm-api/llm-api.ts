/**
 * What an LLM API brings to the one pipeline every LLM route runs (llm-pipeline.ts): how its
 * body's routing fields are checked, how its prompt becomes a routing key, and the other
 * points where APIs differ. Everything else (key, limits, budget, priority, routing,
 * forwarding) is the pipeline's, the same for every API.
 */
import type { PromptKey } from "../../../core/prompt/prompt-key.ts";
import type { CredentialOf } from "../../access/client-access.ts";
import type { Answered } from "../../forward/failover.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import type { LlmApiName } from "../../request-record/request-report.ts";

/** The routing fields every API's validated body has. */
export interface RoutingFields {
  readonly model: string;
}

export interface LlmApi<Body extends RoutingFields = RoutingFields> {
  /** The `api` label of its metrics and log lines. */
  readonly name: LlmApiName;
  /** Where its clients send their key (access/client-access.ts). */
  readonly credential: CredentialOf;
  /** The routing fields of a parsed body, or the 400 (an ApiError) naming the first bad one. */
  validate(json: Record<string, unknown>): Body;
  /** The routing key of the canonical prompt, in chunks of `chunkBytes`. */
  promptKey(body: Body, chunkBytes: number): PromptKey;
  /** Choices the request asks for (OpenAI's `n`), when the API has them. */
  choices(json: Record<string, unknown>): number | undefined;
  /**
   * Whether a pool with P/D origins may serve it: the NIXL and SGLang legs are built from
   * chat and completions bodies (src/worker/pd/leg-bodies.ts), and SGLang's decode engines
   * cannot serve a request whole; an API without legs is refused there (`pdUnsupported`).
   */
  readonly pdLegs: boolean;
  /**
   * The stored response the request continues (Responses' `previous_response_id`): it is then
   * routed to the origin that stored it, not by the pool's policy (stored-responses/).
   */
  continues?(body: Body): string | undefined;
  /** Told when an answer ended whole (Responses: where a stored response now lives). */
  answered?(body: Body, answer: Answered, at: AnswerContext): void;
}

/** Where an answer was served, for `LlmApi.answered`. */
export interface AnswerContext {
  readonly env: Env;
  readonly ctx: Pick<ExecutionContext, "waitUntil">;
  readonly ref: PoolRef;
}
