/**
 * The router's contract with its callers (the Durable Object's RPC, the Worker's fallback, the
 * simulator): what `route` returns, what `complete` and `reroute` are told, what `stats` shows.
 * All plain data, so it crosses Workers RPC by structured clone unchanged.
 */
import type { Health } from "../engine-events.ts";
import type { CircuitState } from "../load-board/circuit-breaker.ts";
import type { EngineLoad, MeasuredPrefill } from "../load-board/load-board.ts";
import type { LearnedBytesPerToken } from "./bytes-per-token.ts";
import type { PdReason } from "./disaggregation.ts";
import type { ShadowStats } from "./shadow-evaluation.ts";
import type { LearnedSpeed } from "./speed-learner.ts";

/** The prefill leg of a disaggregated request. */
export interface PrefillLeg {
  /** The prefill origin's id (an origin with role `prefill`). */
  readonly origin: string;
  /** Prompt tokens it is believed to hold already. */
  readonly matchedTokens: number;
}

export interface RouteDecision {
  /** Chosen origin id, or null when no origin is eligible (reason says why). */
  readonly origin: string | null;
  /** Eligible origins to try next, in order, if the chosen one fails before its first byte. */
  readonly alternates: readonly string[];
  /** Prompt tokens the chosen origin is believed to hold already. */
  readonly matchedTokens: number;
  readonly policy: string;
  readonly reason: string;
  /** Pass back to `reroute`/`complete`; null when nothing was routed. */
  readonly ticket: string | null;
  /**
   * Why the request is or is not disaggregated (router/disaggregation.ts), in a pool with
   * prefill origins; null in other pools and when nothing was routed.
   */
  readonly pdReason: PdReason | null;
  /**
   * The prefill leg when `pdReason` is `pd:remote`, else null. `origin` is then the decode
   * origin, which takes the KV the prefill origin computes; `matchedTokens` and `alternates`
   * are the decode origin's.
   */
  readonly prefill: PrefillLeg | null;
}

/**
 * Why an attempt failed; each counts against the origin's circuit. All but "stream" happen
 * before the first byte (the origin never prefilled); "stream" breaks a response already begun.
 * "status-3xx" is an origin redirecting, which an inference engine never should.
 */
export type FailureKind =
  | "connect"
  | "timeout"
  | "status-3xx"
  | "status-5xx"
  | "status-429"
  | "stream";

/** An engine's `usage` as far as the router learns from it. */
export interface EngineUsage {
  /** `usage.prompt_tokens` as the engine reported it. */
  readonly promptTokens?: number | undefined;
  /** `usage.prompt_tokens_details.cached_tokens` as the engine reported it. */
  readonly cachedTokens?: number | undefined;
}

export interface Outcome extends EngineUsage {
  /** The origin answered and the response ended normally. */
  readonly ok: boolean;
  /** When not ok and the origin is to blame before its first byte. */
  readonly failure?: FailureKind | undefined;
  /**
   * The origin's time to its first token, ms: from sending it the request to its first body
   * byte, for a streamed answer (a whole JSON answer's first byte comes after its decode). The
   * speed learner's sample (speed-learner.ts); absent, nothing is learned of speed.
   */
  readonly ttftMs?: number | undefined;
  /**
   * A disaggregated request whose prefill leg answered: that leg's usage. Its `cachedTokens`
   * is the prefill origin's cache hit, which the router learns from (a decode origin's counts
   * the KV it received as cached, so a disaggregated request's top-level usage teaches nothing).
   */
  readonly prefill?: EngineUsage | undefined;
}

export interface OriginStats {
  id: string;
  url: string;
  eligible: boolean;
  health: Health;
  circuit: CircuitState;
  consecutiveFailures: number;
  outstanding: number;
  queuedPrefillTokens: number;
  activeTokens: number;
  engine: EngineLoad | null;
  reportAgeMs: number | null;
  /** The engine's last measured prefill speed (prefill-rate events) and its age, or null. */
  measuredPrefill: MeasuredPrefill | null;
  /**
   * The prefill speed routing reads (speed-learner.ts): `tokensPerSecond` learned, or the prior
   * while `samples` is 0; `fixedMs` the learned fixed time per request; the prior from settings.
   */
  prefill: LearnedSpeed & { priorTokensPerSecond: number };
  ownedTokens: number;
  capacityTokens: number;
  routed: number;
}

export interface RecentDecision {
  at: number;
  origin: string | null;
  reason: string;
  matchedTokens: number;
  promptTokens: number;
  /** The prefill origin of a disaggregated request, else null. */
  prefillOrigin: string | null;
  pdReason: PdReason | null;
}

/** A prefix drawing many requests (see hot-prefixes.ts), and the origins holding it. */
export interface HotPrefixStats {
  /** Hex of the chained hash naming the prefix (never prompt text). */
  id: string;
  /** Prompt tokens the prefix covers (its chunks times tokens per chunk). */
  tokens: number;
  /** Decayed request count, over-estimated by at most `error`. */
  requests: number;
  error: number;
  /** Requests per second, exponentially weighted over about a minute. */
  ratePerSecond: number;
  /** Origins the index believes hold the whole prefix. */
  origins: string[];
}

export interface RouterStats {
  model: string;
  policy: string;
  /** The pool's bytes per token, learned from engines' `prompt_tokens` (bytes-per-token.ts). */
  bytesPerToken: LearnedBytesPerToken;
  origins: OriginStats[];
  index: { chunks: number; nodes: number; ownerships: number; bytes: number };
  decisions: { total: number; byReason: Record<string, number> };
  /** Disaggregated prefill/decode: decisions by `pdReason`, prefill legs that failed. */
  pd: { byReason: Partial<Record<PdReason, number>>; prefillFailed: number };
  /** Engine truth against the index's belief, over completions that reported cached tokens. */
  accuracy: {
    reports: number;
    predictedTokens: number;
    cachedTokens: number;
    promptTokens: number;
  };
  /** Failed attempts by kind (failovers and failed requests). */
  failures: Partial<Record<FailureKind, number>>;
  /** Counterfactual figures of the pool's shadow policies (see shadow-evaluation.ts). */
  shadows: ShadowStats[];
  /** The hottest shallow prefixes, hottest first. */
  hotPrefixes: HotPrefixStats[];
  outstanding: number;
  recent: RecentDecision[];
}
