/** Constants shared by the test origin server (Node) and the tests (workerd). */

/** `usage.prompt_tokens_details.cached_tokens` in every answer of the test origins. */
export const CACHED_TOKENS = 32;

/** The cached_tokens of the P/D test origins' prefill legs (pd-origin.node.ts). */
export const PD_PREFILL_CACHED = 48;

/** Where the `redirect` test origin points: an internal address the client must never see. */
export const REDIRECT_LOCATION = "http://10.0.0.9:8000/internal/v1/chat/completions";

/**
 * Client headers that steer disaggregated serving or name an upstream (llm-d, Dynamo, the
 * Gateway API Inference Extension, SGLang's gateway, AIBrix, Envoy) or carry a client's key:
 * the test origins echo them so the tests can check none arrives.
 */
export const STEERING_HEADERS = [
  "x-prefiller-host-port",
  "x-prefiller-url",
  "x-encoder-hosts-ports",
  "x-data-parallel-host-port",
  "x-kv-cache-source-host-port",
  "x-llm-d-prefiller-host-port",
  "x-gateway-destination-endpoint",
  "x-worker-instance-id",
  "x-prefill-instance-id",
  "x-dynamo-routing-mode",
  "x-smg-target-worker",
  "target-pod",
  "routing-strategy",
  "x-envoy-original-dst-host",
  "x-api-key",
  "api-key",
  // Underscore spellings, which CGI-style servers and some proxies read as the dashed names.
  "x_prefiller_host_port",
  "x_api_key",
] as const;

/**
 * Forwarding headers: a client's copies must not arrive; the router sets `x-forwarded-for`,
 * `-proto` and `-host` itself. The test origins echo them.
 */
export const FORWARDING_HEADERS = [
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "x-forwarded-port",
  "x-original-url",
  "x-real-ip",
] as const;

/** A request as a test origin received it (`GET /_received/<name>` lists them). */
export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}
