/**
 * Body fields that tell an engine where to fetch KV cache from or whom to meet for it. In a
 * disaggregated (prefill/decode) fleet they are the router's to set on each leg; from a client
 * they are an SSRF into the GPU network, the body twin of llm-d's `x-prefiller-host-port`
 * header (`forward/origin-request.ts` strips those):
 * - vLLM's `kv_transfer_params` (NixlConnector: `remote_host`/`remote_port` are dialled by the
 *   decode engine to pull blocks; docs/api.md and ../shared/research/disaggregation.md);
 * - SGLang's `bootstrap_host`, `bootstrap_port`, `bootstrap_room` (the decode engine meets the
 *   prefill engine at that address).
 * The router forwards the client's bytes untouched, so it refuses these rather than rewriting.
 */
export const ROUTER_OWNED_FIELDS = [
  "kv_transfer_params",
  "bootstrap_host",
  "bootstrap_port",
  "bootstrap_room",
] as const;

/** The first router-owned field the body sets, if any. */
export function routerOwnedField(body: Record<string, unknown>): string | undefined {
  return ROUTER_OWNED_FIELDS.find((field) => Object.hasOwn(body, field));
}
