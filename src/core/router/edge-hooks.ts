/**
 * How an edge replica's `CoreRouter` departs from the object's (src/core/edge, and
 * docs/architecture.md, "Scale: two coordination modes"). The router calls these three hooks
 * and nothing else changes: the replica supplies the load it read from its coordinator, the
 * seed that makes every replica break a request's ties alike, and the pick among the policy's
 * best candidates that keeps replicas reading one stale view from herding. Below them, the
 * shapes of the router's other edge methods (`record`, `claimOf`, `loads`).
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import type { Decision, PolicyContext } from "../policies/policy.ts";
import type { LearnedCapacity } from "./capacity-learner.ts";
import type { LearnedSpeed } from "./speed-learner.ts";

export interface EdgeHooks {
  /** The load a policy reads of `originId`, given what this router itself leased there. */
  load(originId: string, own: OriginLoadView, now: number): OriginLoadView;
  /** The seed of this decision's random draws (ties, power of two): a hash of the request. */
  seed(context: PolicyContext): number;
  /** The decision to act on, given the policy's (drawing from `context.rng`). */
  pick(context: PolicyContext, decision: Decision): Decision;
}

/** A decision another router made: its origin, its prompt as a path and a run, its reason. */
export interface RecordedRoute {
  readonly origin: string;
  readonly parent: number | null;
  readonly run: readonly number[];
  readonly promptTokens: number;
  /** The canonical prompt's bytes, when the edge sent them (route-request.ts `RouteRequest`). */
  readonly promptBytes?: number | undefined;
  readonly reason: string;
}

export interface RecordedClaim {
  readonly hashes: readonly number[];
  readonly heldChunks: number;
  readonly deepestChunks: number;
}

/** A live ticket's claim, as a coordinator logs taking it back (replica-seams.ts `claimOf`). */
export interface LiveClaim {
  readonly origin: string;
  readonly hashes: ArrayLike<number>;
  /** Chunks the origin held of the prompt before the claim. */
  readonly heldChunks: number;
}

/** One origin's load as this router reads it, its capacity and speed (a coordinator's vector). */
export interface OriginLoad {
  readonly id: string;
  readonly load: OriginLoadView;
  readonly capacity: LearnedCapacity;
  readonly speed: LearnedSpeed;
}
