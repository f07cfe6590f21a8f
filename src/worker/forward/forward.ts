/**
 * Forwarding a routed request to one origin at a time (docs/architecture.md, "One request",
 * steps 5-6): the failover loop (failover.ts), then the answer streamed back and reported
 * (respond.ts). A disaggregated request (`decision.prefill`) takes two legs instead
 * (src/worker/pd/); every other request of a P/D pool is served here, alone, and says why in
 * `x-router-pd`.
 */
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { ApiError } from "../errors/api-error.ts";
import { type ForwardInput, tryInTurn } from "./failover.ts";
import { failAll, respond } from "./respond.ts";

export type { ForwardInput } from "./failover.ts";

export async function forward(input: ForwardInput): Promise<Response> {
  const { decision } = input.routed;
  if (decision.origin === null || decision.ticket === null) throw noEligibleOrigin(input.pool);
  const tried = await tryInTurn(input, null);
  if (!tried.ok) failAll(input, tried.failures);
  return respond(tried.started, tried.served, input);
}

export function noEligibleOrigin(pool: PoolSettings): ApiError {
  return new ApiError(
    503,
    "server_error",
    "no_eligible_origin",
    "no origin of this model is available",
    { headers: { "retry-after": String(Math.ceil(pool.circuit.cooldownMs / 1000)) } },
  );
}
