/**
 * What the Worker makes of a stored-route answer (core/responses/stored-route.ts), in either
 * coordination mode: the decision to forward, or the error the client gets.
 */
import type { StoredRefusal, StoredRoute } from "../../core/responses/stored-route.ts";
import type { RouteDecision } from "../../core/router/router-types.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { previousResponseNotFound, storedResponseUnavailable } from "./stored-response-errors.ts";

/** The router could not say (its object failed or was late). */
export interface LookupFailed {
  readonly kind: "error";
  readonly error: unknown;
}

export function routedOrThrow(
  pool: PoolSettings,
  responseId: string,
  // RPC's typing of a union answer (each member made Disposable) does not narrow back to it.
  answer: unknown,
): RouteDecision {
  const stored = answer as StoredRoute | LookupFailed;
  if (stored.kind === "routed") return stored.decision;
  return refuse(pool, responseId, stored);
}

/** The client's error for a follow-up that cannot be served. */
export function refuse(
  pool: PoolSettings,
  responseId: string,
  why: StoredRefusal | LookupFailed,
): never {
  switch (why.kind) {
    case "unknown":
    case "gone":
      throw previousResponseNotFound(responseId, why.kind);
    case "unavailable":
      throw storedResponseUnavailable(
        responseId,
        `the origin that stored it is ${why.why}`,
        pool.circuit.cooldownMs / 1000,
      );
    case "error":
      console.warn(`stored response ${responseId}: lookup failed: ${String(why.error)}`);
      throw storedResponseUnavailable(responseId, "the router could not look it up", 1);
  }
}
