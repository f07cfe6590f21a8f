/**
 * The one interface every routing policy implements, and the read-only view of the pool a policy
 * decides on. Policies are pure decision functions over this view: the router owns the index, the
 * load board and every side effect (leases, index inserts), so the same policy code runs in the
 * Durable Object, in the Worker's fallback and in the simulator.
 */
import type { EngineLoad } from "../load-board/load-board.ts";
import type { Rng } from "../rng.ts";
import type { RouteRequest } from "../route-request.ts";

/** What the load board knows of one origin at decision time. */
export interface OriginView {
  /** Origin id from settings. */
  readonly id: string;
  /** Healthy, not draining, and its circuit lets a request through. */
  readonly eligible: boolean;
  /** Requests the router sent and has not seen finish (its own accounting). */
  readonly outstanding: number;
  /**
   * Prefill work the router estimates is still queued or running there, in short-context token
   * equivalents (prefill-work.ts); it drains at `prefillTokensPerSecond`.
   */
  readonly queuedPrefillTokens: number;
  /** Prompt tokens of the outstanding requests (their KV footprint while they decode). */
  readonly activeTokens: number;
  /**
   * Uncached prompt tokens of the outstanding requests whose first token the router has not
   * seen (until they end, where the caller does not report first tokens).
   */
  readonly prefillingTokens: number;
  /**
   * KV blocks (chunks) the outstanding requests' prompts occupy, a chunk they share counted
   * once, where the pool tracks it (`usesActiveChunks`); else activeTokens / tokensPerChunk.
   */
  readonly activeChunks: number;
  /** Prompt tokens the index believes the origin holds (the size of its part of the tree). */
  readonly indexedTokens: number;
  /** The engine's last report, weighted by freshness; null when it never reported or is stale. */
  readonly engine: EngineLoad | null;
  /** Prefill speed in tokens per second (settings, default per pool). */
  readonly prefillTokensPerSecond: number;
  /** Relative capacity weight (settings, default 1). */
  readonly weight: number;
}

export interface PolicyContext {
  /** The request (its prompt tokens as the router re-estimated them: router-parts.ts). */
  readonly request: RouteRequest;
  /**
   * The pool's origins in settings order; decisions index into this array. These indexes are
   * positions (origin-indexes.ts), which the router alone maps to index and board slots.
   */
  readonly origins: readonly OriginView[];
  /** matchedTokens[i]: prompt tokens origins[i] is believed to hold in its KV cache. */
  readonly matchedTokens: readonly number[];
  readonly tokensPerChunk: number;
  /** The pool's `prefillAttentionTokens`, for `prefillWork`. */
  readonly attentionTokens: number;
  /**
   * Leading prompt tokens on prefixes at least `minHeat` requests went through lately (the
   * index's heat, radix-index/heat.ts): shared and hot, as opposed to one conversation's own.
   * Computed on demand.
   */
  readonly hotTokens: (minHeat: number) => number;
  /**
   * Leading prompt tokens that different prompts share: up to the deepest hot prefix (at least
   * `minHeat` requests lately) where prompts branch, such as a system prompt under many
   * conversations; one conversation's own turns never count (radix-index `sharedDepth`).
   * Computed on demand.
   */
  readonly sharedTokens: (minHeat: number) => number;
  /**
   * Chunks (KV blocks) this prompt would add to origins[i]'s in-flight chunks: those no request
   * there already holds, or all of them (a partial last chunk included) where the pool does not
   * track active chunks. Computed on demand, O(prompt chunks).
   */
  readonly addedChunks: (i: number) => number;
  /** Caller's clock in milliseconds (logical in the simulator). */
  readonly now: number;
  readonly rng: Rng;
}

export interface Decision {
  /** Index into `origins`, or -1 when no origin is eligible. */
  readonly origin: number;
  /** Which branch the policy took, e.g. "cache-hit", "overflow", "no-eligible-origin". */
  readonly reason: string;
  /** Optional preference order (indexes) for failover; the router completes it. */
  readonly ranking?: readonly number[];
  /**
   * Optional: each origin's score (by index; lower is better, in the policy's units), for
   * pickers that weigh near-best origins (an edge replica's, src/core/edge/stale-pick.ts).
   */
  readonly scores?: readonly number[];
}

export interface Policy {
  readonly name: string;
  decide(context: PolicyContext): Decision;
}

export const NO_ELIGIBLE_ORIGIN: Decision = { origin: -1, reason: "no-eligible-origin" };

/**
 * A policy that decides among the eligible origins only. The contract's first half (never an
 * ineligible origin, and `no-eligible-origin` when there is none) lives here once, so each
 * policy is only its own choice among `eligible` (indexes into `origins`, never empty).
 */
export function overEligible(
  name: string,
  decide: (context: PolicyContext, eligible: readonly number[]) => Decision,
): Policy {
  return {
    name,
    decide(context: PolicyContext): Decision {
      const eligible = eligibleIndexes(context.origins);
      return eligible.length === 0 ? NO_ELIGIBLE_ORIGIN : decide(context, eligible);
    },
  };
}

/** Indexes of eligible origins. */
export function eligibleIndexes(origins: readonly OriginView[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < origins.length; i++) if (origins[i]?.eligible) out.push(i);
  return out;
}
