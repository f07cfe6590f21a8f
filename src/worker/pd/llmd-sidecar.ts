/**
 * llm-d's routing sidecar on the decode origin runs the P/D protocol itself: the router sends
 * the decode origin the client's request with `x-prefiller-host-port` naming the prefill
 * origin's engine (engine-address.ts), as llm-d's scheduler does. The router sets this header
 * only here; a client's copy never reaches an origin (forward/origin-request.ts). The sidecar
 * does not pass on the prefill's usage, so the index learns nothing from this leg's cache.
 * Failures: a decode origin that fails before its first byte is failed over alone (without
 * the header); a failed prefill is the sidecar's to handle (llm-d's falls back to decoding
 * alone).
 */
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { type ForwardInput, tryInTurn } from "../forward/failover.ts";
import { prefillerHostPort } from "./engine-address.ts";
import { answer } from "./outcomes.ts";

export const PREFILLER_HEADER = "x-prefiller-host-port";

export async function serveSidecar(
  input: ForwardInput,
  prefill: OriginSettings,
  matchedTokens: number,
): Promise<Response> {
  input.record.prefill = { origin: prefill.id, matchedTokens };
  const leg = { routerHeaders: { [PREFILLER_HEADER]: prefillerHostPort(prefill) } };
  return answer(input, await tryInTurn(input, { leg }), prefill.id);
}
