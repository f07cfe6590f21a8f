/**
 * What goes to the origin and what comes back, header by header. The client's credentials
 * (Authorization, cookies, API-key headers) and hop-by-hop headers (RFC 9110 section 7.6.1)
 * never reach the origin; the origin's own key, from the Worker secret its settings name, does.
 * Cloudflare's `cf-*` headers and the router's own `x-router-*` request headers stay at the edge
 * too, and so does every header that tells a serving stack behind the origin where to send or
 * fetch work: llm-d's decode sidecar, for one, pulls KV cache from whatever host
 * `x-prefiller-host-port` names, so a client copy would be an SSRF into the GPU network.
 * A name is matched with `_` read as `-`: servers that map headers to CGI-style variables
 * (`HTTP_X_PREFILLER_HOST_PORT`), and proxies set to, treat the two spellings as one header.
 * The forwarding headers (`Forwarded`, `X-Forwarded-*`, `X-Original-*`, ...) are the router's:
 * it sets `X-Forwarded-For`, `-Proto` and `-Host` from what the platform tells it, never
 * relaying a client's claim about its own address or the URL it asked for.
 */
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { ApiError } from "../errors/api-error.ts";

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];
/**
 * `expect` too: the Worker already holds the whole body, and an origin asked to `100-continue`
 * (or anything it does not know) answers 417 with nothing the client can use.
 */
const CLIENT_ONLY = [
  "authorization",
  "cookie",
  "host",
  "content-length",
  "expect",
  "x-api-key",
  "api-key",
];

/**
 * Client headers forwarded at most, in bytes (`name: value\r\n` each). vLLM's server (h11) and
 * Node refuse a header block past 16 KiB with 431, which would reach the client as a failed
 * origin (502) after failing over, so the router refuses at once what no origin would take,
 * leaving room for the origin's own key and the request id.
 */
export const MAX_FORWARDED_HEADER_BYTES = 8 * 1024;

/**
 * Headers by which a client could choose an upstream address or a worker behind the origin
 * (docs/api.md lists them with their sources). Those a router sets are its own to set, never a
 * client's: llm-d (`x-prefiller-*`, `x-encoder-hosts-ports`, `x-data-parallel-host-port`,
 * `x-kv-cache-source-host-port`, their `x-llm-d-*` spellings), NVIDIA Dynamo (worker and DP-rank
 * picks), AIBrix (`target-pod`, `routing-strategy`).
 */
const STEERING = [
  "x-prefiller-host-port",
  "x-prefiller-url",
  "x-encoder-hosts-ports",
  "x-data-parallel-host-port",
  "x-kv-cache-source-host-port",
  "x-worker-instance-id",
  "x-prefill-instance-id",
  "x-dp-rank",
  "x-data-parallel-rank",
  "x-prefill-dp-rank",
  "target-pod",
  "routing-strategy",
];

/**
 * Prefixes of the same kind: llm-d's renamed headers, the Gateway API Inference Extension's
 * endpoint picks (`x-gateway-destination-endpoint*`), the endpoint picker's and Dynamo's own
 * (`x-epp-*`, `x-dynamo-*`), SGLang's model gateway (`X-SMG-Target-Worker`,
 * `X-SMG-Routing-Key`) and Envoy's (`x-envoy-original-dst-host` picks the upstream address).
 */
const STEERING_PREFIXES = [
  "x-llm-d-",
  "x-gateway-destination-endpoint",
  "x-epp-",
  "x-dynamo-",
  "x-smg-",
  "x-envoy-",
];
/**
 * What a proxy claims about the client and the URL it asked for (RFC 7239's `Forwarded`; the
 * de facto `X-Forwarded-*`; `X-Real-IP` and `True-Client-IP`; IIS's and Symfony's
 * `X-Original-URL` and `X-Rewrite-URL`, which rewrite the path an app serves): a client's copy
 * would let it pose as another address or reach a path the router did not route.
 */
const FORWARDING = ["forwarded", "x-real-ip", "true-client-ip", "x-client-ip", "x-rewrite-url"];
const FORWARDING_PREFIXES = ["x-forwarded-", "x-original-"];
/** Cloudflare's headers and the router's own request headers. */
const EDGE_PREFIXES = ["cf-", "x-router-"];
const DROPPED_PREFIXES = [...STEERING_PREFIXES, ...FORWARDING_PREFIXES, ...EDGE_PREFIXES];
/** Every client header that never reaches the origin by its name alone. */
const DROPPED_NAMES = new Set([...HOP_BY_HOP, ...CLIENT_ONLY, ...STEERING, ...FORWARDING]);

/**
 * Whether a name of `headers` goes: `dropped` names it, or the sender listed it in Connection
 * (hop-by-hop too; lowercase, as Headers yields names). workerd's HTTP layer (KJ's connection
 * headers) consumes a client's Connection before the Worker runs, so this sees one only from a
 * caller without HTTP: a service binding, the tests (docs/api.md).
 */
function dropping(headers: Headers, dropped: (name: string) => boolean): (name: string) => boolean {
  const connection = headers.get("connection");
  const listed = new Set(connection?.split(",").map((name) => name.trim().toLowerCase()));
  return (name) => listed.has(name) || dropped(name);
}

/**
 * A copy of `headers` without what `dropping` drops. Only the names present are deleted: each
 * Headers call crosses into the runtime, and deleting every name the router drops (some thirty)
 * from every request cost more than routing it (issue 12).
 */
function without(headers: Headers, dropped: (name: string) => boolean): Headers {
  const drops = dropping(headers, dropped);
  const copy = new Headers(headers);
  for (const name of headers.keys()) if (drops(name)) copy.delete(name);
  return copy;
}

function notForOrigin(name: string): boolean {
  const dashed = name.replaceAll("_", "-");
  return DROPPED_NAMES.has(dashed) || DROPPED_PREFIXES.some((prefix) => dashed.startsWith(prefix));
}

/** The origin's endpoint for `path`; a base URL already ending in `/v1` is not doubled. */
export function originUrl(base: string, path: string): string {
  const url = new URL(base);
  let prefix = url.pathname.replace(/\/+$/, "");
  if (prefix.endsWith("/v1") && path.startsWith("/v1/")) prefix = prefix.slice(0, -3);
  url.pathname = prefix + path;
  return url.toString();
}

/** The origin's API key, or undefined when it needs none. */
export function originKey(env: Env, origin: OriginSettings): string | undefined {
  if (origin.apiKeySecret === undefined) return undefined;
  const key = (env as unknown as Record<string, unknown>)[origin.apiKeySecret];
  if (typeof key === "string" && key !== "") return key;
  console.error(`origin ${origin.id}: secret ${origin.apiKeySecret} is not set`);
  throw new ApiError(
    500,
    "server_error",
    "origin_misconfigured",
    "the router is misconfigured: an origin's API key is not set",
  );
}

/**
 * The headers for the origin: the client's that pass, the origin's key, the request id, and the
 * forwarding headers from what the platform tells the Worker: the client's address from
 * `cf-connecting-ip` (which Cloudflare sets and a client cannot), the scheme and host from the
 * URL the client asked for (`clientUrl`).
 */
export function originHeaders(
  client: Headers,
  apiKey: string | undefined,
  requestId: string,
  clientUrl: string,
): Headers {
  const headers = without(client, notForOrigin);
  if (apiKey !== undefined) headers.set("authorization", `Bearer ${apiKey}`);
  headers.set("x-request-id", requestId);
  const address = client.get("cf-connecting-ip");
  if (address !== null) headers.set("x-forwarded-for", address);
  const url = new URL(clientUrl);
  headers.set("x-forwarded-proto", url.protocol.slice(0, -1));
  headers.set("x-forwarded-host", url.host);
  return headers;
}

/** A 431 when the client headers the origin would get are more than any origin takes. */
export function checkForwardedHeaders(client: Headers): void {
  // The block of the client's headers originHeaders(client, undefined, "", url) passes, with
  // the request id (`name: value\r\n` each), uncopied. The forwarding headers the router adds
  // take some hundred bytes at most, well within the room the limit leaves.
  const drops = dropping(client, notForOrigin);
  let bytes = "x-request-id".length + 4;
  for (const [name, value] of client) {
    if (!drops(name) && name !== "x-request-id") bytes += name.length + value.length + 4;
  }
  if (bytes <= MAX_FORWARDED_HEADER_BYTES) return;
  throw new ApiError(
    431,
    "invalid_request_error",
    "request_header_fields_too_large",
    `request headers forwarded to the origin take ${bytes} bytes; at most ${MAX_FORWARDED_HEADER_BYTES} are accepted`,
  );
}

const NOT_FOR_CLIENT = new Set([...HOP_BY_HOP, "set-cookie", "content-length", "location"]);

/**
 * The origin's response headers for the client: hop-by-hop removed, and Set-Cookie too (a
 * cookie of the origin's host means nothing on the router's). Content-Length goes because the
 * runtime may have decoded a compressed body, which changes its length. Location goes because
 * it would name an origin's address (a 3xx never gets this far: attempt.ts fails it).
 */
export function clientHeaders(origin: Headers): Headers {
  return without(origin, (name) => NOT_FOR_CLIENT.has(name));
}
