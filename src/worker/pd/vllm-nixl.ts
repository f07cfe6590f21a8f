/**
 * vLLM's NixlConnector, relayed in two fetches (vLLM's toy_proxy_server.py; production-stack's
 * `disaggregated_prefill_orchestrated`), with the same `x-request-id` on both legs:
 *
 * 1. The prefill leg (leg-bodies.ts, `nixlPrefillBody`) asks the prefill origin for one token
 *    and the `kv_transfer_params` a decode engine needs; its answer is read whole.
 * 2. The decode leg is the client's bytes plus those params, `remote_host` overwritten with the
 *    prefill origin's engine host (engine-address.ts): vLLM answers `localhost` unless told
 *    otherwise. Its answer streams to the client.
 *
 * A prefill answer without params (vLLM answers them only for a request that stopped on
 * length) sends the decode leg the client's bytes alone, and the decode engine computes the
 * prompt itself. Failures: outcomes.ts.
 */
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { attempt } from "../forward/attempt.ts";
import { type ForwardInput, tryInTurn } from "../forward/failover.ts";
import { engineHost } from "./engine-address.ts";
import { nixlPrefillBody, withFields } from "./leg-bodies.ts";
import { answer, passRejection, serveAlone } from "./outcomes.ts";
import { prefillAnswer } from "./prefill-answer.ts";

export async function serveNixl(
  input: ForwardInput,
  prefill: OriginSettings,
  matchedTokens: number,
): Promise<Response> {
  const { pool, record } = input;
  const leg = { ...input.request, body: nixlPrefillBody(input.json) };
  const result = await attempt(input.env, prefill, { ...leg, timeoutMs: pool.firstByteTimeoutMs });
  const prefilled = await prefillAnswer(result, pool.streamIdleTimeoutMs);
  if (prefilled.kind === "failed") return serveAlone(input, prefill, prefilled.failure);
  if (prefilled.kind === "rejected")
    return passRejection(input, prefill, prefilled.started, matchedTokens);
  record.prefill = { origin: prefill.id, matchedTokens, usage: prefilled.usage };
  const params = prefilled.body.kv_transfer_params;
  const first =
    typeof params === "object" && params !== null
      ? {
          leg: {
            body: withFields(input.request.body, {
              kv_transfer_params: { ...params, remote_host: engineHost(prefill) },
            }),
          },
        }
      : null;
  return answer(input, await tryInTurn(input, first), prefill.id);
}
