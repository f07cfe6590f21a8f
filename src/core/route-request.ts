/**
 * The request as the core sees it: chunk hashes from the edge, never the prompt itself, with
 * what the edge measured and who sent it. One type for every reader: the router's `route`, the
 * policies' context (policy.ts), admission and the Worker's and the simulator's callers.
 */

/** A client's class of service: `batch` is shed before `interactive` under overload. */
export type Priority = "interactive" | "batch";

/** Who sent a request, as the edge authenticated it: the key's id (never the key) and class. */
export interface RouteClient {
  readonly key: string;
  readonly priority: Priority;
}

export interface RouteRequest {
  /** chunkHashes[i] names chunks 0..i of the canonical prompt (computed at the edge). */
  readonly chunkHashes: ArrayLike<number>;
  /** The caller's estimate of prompt tokens (bytes / 4 at the edge). */
  readonly promptTokens: number;
  /**
   * The canonical prompt's bytes, as the edge hashed them: when present, the core estimates
   * prompt tokens from them at the pool's learned bytes per token (bytes-per-token.ts) and
   * learns that ratio from the engine's `prompt_tokens` on `complete`.
   */
  readonly promptBytes?: number | undefined;
  readonly sessionKey?: string | undefined;
  /** Choices asked for (OpenAI's `n`); absent means 1. More than one is never disaggregated. */
  readonly n?: number | undefined;
  /**
   * The client's key id and priority, for admission's fair share and shedding order
   * (src/core/admission); absent: one anonymous interactive client.
   */
  readonly client?: RouteClient | undefined;
}
