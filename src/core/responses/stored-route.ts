/**
 * The decision for a Responses request that names a `previous_response_id` (docs/api.md,
 * "Stored responses"): the origin that stored it, and no other. No policy chooses and nothing
 * fails over, since that origin alone holds the response; the request is still leased and its
 * prompt claimed there (the router's `record`, as for an edge replica's decision), so the load
 * board and the index see it like any other. Refused, as values, when the id is unknown or
 * expired (`unknown`), its origin has left the pool's settings (`gone`), or the origin is not
 * taking requests: reported draining or down, or its circuit open (`unavailable`).
 */
import type { CoreRouter } from "../router/core-router.ts";
import type { RouteDecision, RouteRequest } from "../router/router-types.ts";
import type { StoredResponse } from "./stored-responses.ts";

/** The reason a pinned decision carries (`x-router-reason`, the decision log). */
export const STORED_RESPONSE_REASON = "stored-response";

export type StoredRoute =
  | { readonly kind: "routed"; readonly decision: RouteDecision }
  | { readonly kind: "unknown" }
  | { readonly kind: "gone"; readonly origin: string }
  | { readonly kind: "unavailable"; readonly origin: string; readonly why: string };

export function storedRoute(
  router: CoreRouter,
  stored: StoredResponse | null,
  request: RouteRequest,
  ticket: string,
  now: number,
): StoredRoute {
  if (stored === null) return { kind: "unknown" };
  const { origin } = stored;
  const load = router.loads(now).find((l) => l.id === origin)?.load;
  if (!load) return { kind: "gone", origin };
  if (!load.eligible) {
    const why = load.health !== "up" ? load.health : `circuit ${load.circuit}`;
    return { kind: "unavailable", origin, why };
  }
  const { promptTokens, promptBytes } = request;
  const route = {
    origin,
    parent: null,
    run: Array.from(request.chunkHashes),
    promptTokens,
    promptBytes,
    reason: STORED_RESPONSE_REASON,
  };
  const claim = router.record(ticket, route, now);
  // Null only for a live ticket of that name or an unknown origin, both excluded above.
  if (claim === null) throw new Error(`ticket ${ticket} is live or ${origin} unknown`);
  const matchedTokens = Math.min(promptTokens, claim.heldChunks * router.tokensPerChunk);
  const decision: RouteDecision = {
    origin,
    alternates: [],
    matchedTokens,
    policy: router.policyName,
    reason: STORED_RESPONSE_REASON,
    ticket,
    pdReason: null,
    prefill: null,
  };
  return { kind: "routed", decision };
}
