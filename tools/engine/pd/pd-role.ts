/**
 * What a simulated engine does differently in a disaggregated prefill/decode (P/D) pair, as the
 * engines the router drives do it (../../../docs/api.md, "Disaggregated prefill/decode";
 * research/disaggregation.md has the fields as read in upstream source):
 *
 * - `vllm-nixl` (vLLM's NixlConnector): a prefill engine given `kv_transfer_params` with
 *   `do_remote_decode` answers with the params a decode engine needs and holds the prompt's KV
 *   for the lease; a decode engine given them pulls the blocks it lacks over the prefill's side
 *   channel (nixl-prefill.ts, nixl-decode.ts).
 * - `sglang` (SGLang's bootstrap): both engines get `bootstrap_host`, `bootstrap_port` and
 *   `bootstrap_room`; they meet in the room at the prefill's bootstrap server
 *   (sglang-prefill.ts, sglang-decode.ts).
 *
 * The "KV" that moves is the prompt's chunk hashes: the decode engine seals those blocks into
 * its own prefix cache, as a transfer does, and its engine model admits the request with all
 * but the last prompt token computed (sim/engine/engine.ts, `remoteTokens`). The private
 * channels are plain HTTP on ports of their own (side-server.ts); the router never calls them.
 */
import type { EngineRequest } from "../../../sim/engine/engine.ts";

export type PdProtocol = "vllm-nixl" | "sglang";
export type PdRoleName = "prefill" | "decode";

/** What an engine answers instead of a completion; OpenAI's error shape. */
export interface PdError {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

/** One request as the P/D role sees it, before it is queued. */
export interface PdRequest {
  readonly body: Readonly<Record<string, unknown>>;
  readonly hashes: ArrayLike<number>;
  readonly promptTokens: number;
  /** The engine's id for the request (vLLM: `chatcmpl-` + the client's `x-request-id`). */
  readonly requestId: string;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/** How the request runs. */
export interface PdPlan {
  /** Leading prompt tokens whose KV a transfer delivered. */
  readonly remoteTokens: number;
  /** Output tokens, when the role caps them (an SGLang prefill samples one). */
  readonly maxTokens?: number;
  /** `cached_tokens` to report, when it is not the engine's own count. */
  readonly reportedCached?: number;
  /** Once the request is done: fields for the top of the JSON answer, or an error instead. */
  finish?(request: EngineRequest): Promise<PdFinish>;
}

export type PdFinish = { readonly fields: Record<string, unknown> } | { readonly error: PdError };

export interface PdRole {
  /** Before the request is queued: what KV arrives, or why it cannot run. */
  admit(request: PdRequest): Promise<PdPlan | { readonly error: PdError }>;
  /** The private address other engines dial (side channel, bootstrap server), if any. */
  readonly endpoint: string | null;
  close(): Promise<void>;
}

/** A plan for a request served whole, as any engine would. */
export const WHOLE: PdPlan = { remoteTokens: 0 };

export function serverError(message: string): { error: PdError } {
  return { error: { status: 500, type: "InternalServerError", message } };
}

/** The object at `body[field]`, if it is one. */
export function objectField(
  body: Readonly<Record<string, unknown>>,
  field: string,
): Record<string, unknown> | null {
  const value = body[field];
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Whether `got` (from the other engine) names the same prompt blocks as `own` from `from`. */
export function sameBlocks(own: ArrayLike<number>, got: readonly unknown[], from = 0): boolean {
  if (got.length !== own.length - from) return false;
  return got.every((hash, i) => hash === own[from + i]);
}
