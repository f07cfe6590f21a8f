/**
 * The decision for a Responses request that names a `previous_response_id` (docs/api.md,
 * "Stored responses"): the origin that stored it, and no other. No policy chooses and nothing
 * fails over, since that origin alone holds the response; the request is still leased and its
 * prompt claimed there (the router's `record`, as for an edge replica's decision), so the load
 * board and the index see it like any other. Refused, as values, when the id is unknown or
 * expired (`unknown`), its origin has left the pool's settings (`gone`), or the origin is not
 * taking requests: reported draining or down, or its circuit open (`unavailable`).
 */
import type { OriginLoadView } from "../load-board/load-board.ts";
import type { RouteRequest } from "../route-request.ts";
import type { CoreRouter } from "../router/core-router.ts";
import type { RouteDecision } from "../router/router-types.ts";
import type { StoredResponse } from "./stored-responses.ts";

/** The reason a pinned decision carries (`x-router-reason`, the decision log). */
export const STORED_RESPONSE_REASON = "stored-response";

export type StoredRoute =
  | { readonly kind: "routed"; readonly decision: RouteDecision }
  | { readonly kind: "unknown" }
  | { readonly kind: "gone"; readonly origin: string }
  | { readonly kind: "unavailable"; readonly origin: string; readonly why: string };

export type StoredRefusal = Exclude<StoredRoute, { kind: "routed" }>;

/**
 * Why `stored` cannot be served, given each origin's load as the deciding router reads it (an
 * edge replica's includes its coordinator's view of health), or null when its origin can.
 */
export function storedRefusal(
  stored: StoredResponse | null,
  loads: readonly { readonly id: string; readonly load: OriginLoadView }[],
): StoredRefusal | null {
  if (stored === null) return { kind: "unknown" };
  const { origin } = stored;
  const load = loads.find((l) => l.id === origin)?.load;
  if (!load) return { kind: "gone", origin };
  if (load.eligible) return null;
  const why = load.health !== "up" ? load.health : `circuit ${load.circuit}`;
  return { kind: "unavailable", origin, why };
}

/** The decision of a request pinned to `origin`, which holds `heldChunks` of its prompt. */
export function pinnedDecision(
  router: CoreRouter,
  origin: string,
  ticket: string,
  promptTokens: number,
  heldChunks: number,
): RouteDecision {
  return {
    origin,
    alternates: [],
    matchedTokens: Math.min(promptTokens, heldChunks * router.tokensPerChunk),
    policy: router.policyName,
    reason: STORED_RESPONSE_REASON,
    ticket,
    pdReason: null,
    prefill: null,
  };
}

/** The pool object's decision: checked against its own loads, leased with `record`. */
export function storedRoute(
  router: CoreRouter,
  stored: StoredResponse | null,
  request: RouteRequest,
  ticket: string,
  now: number,
): StoredRoute {
  const refusal = storedRefusal(stored, router.loads(now));
  if (refusal !== null || stored === null) return refusal ?? { kind: "unknown" };
  const { origin } = stored;
  const { promptTokens, promptBytes } = request;
  const route = {
    origin,
    parent: null,
    run: Array.from(request.chunkHashes),
    promptTokens,
    promptBytes,
    reason: STORED_RESPONSE_REASON,
  };
  const claim = router.seams.record(ticket, route, now);
  // Null only for a live ticket of that name or an unknown origin, both excluded above.
  if (claim === null) throw new Error(`ticket ${ticket} is live or ${origin} unknown`);
  return {
    kind: "routed",
    decision: pinnedDecision(router, origin, ticket, promptTokens, claim.heldChunks),
  };
}
