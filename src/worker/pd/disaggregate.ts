/**
 * A disaggregated request (the decision names a prefill origin: `pd:remote`), served over the
 * protocol its pool's P/D origins speak (docs/api.md, "Disaggregated prefill/decode"): vLLM's
 * NixlConnector relayed in two fetches (vllm-nixl.ts), SGLang's bootstrap in two concurrent
 * fetches (sglang.ts), or llm-d's sidecar in one fetch with a header (llmd-sidecar.ts). Fetch
 * is all a Worker has, and all these need. What failures lead to: outcomes.ts.
 */
import type { ForwardInput } from "../forward/failover.ts";
import { forward, noEligibleOrigin } from "../forward/forward.ts";
import { serveSidecar } from "./llmd-sidecar.ts";
import { serveSglang } from "./sglang.ts";
import { serveNixl } from "./vllm-nixl.ts";

export function disaggregate(input: ForwardInput): Promise<Response> {
  const { decision } = input.routed;
  if (decision.prefill === null) return forward(input);
  if (decision.origin === null || decision.ticket === null) throw noEligibleOrigin(input.pool);
  const byId = (id: string) => input.pool.origins.find((o) => o.id === id);
  const prefill = byId(decision.prefill.origin);
  const decode = byId(decision.origin);
  // route-request.ts makes sure this isolate's settings know both origins.
  if (!prefill?.pd || !decode) throw new Error(`unknown P/D origins in ${decision.ticket}`);
  const { matchedTokens } = decision.prefill;
  switch (prefill.pd.protocol) {
    case "vllm-nixl":
      return serveNixl(input, prefill, matchedTokens);
    case "sglang":
      return serveSglang(input, prefill, decode, matchedTokens);
    case "llmd-sidecar":
      return serveSidecar(input, prefill, matchedTokens);
  }
}
