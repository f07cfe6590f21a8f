/**
 * Where engines reach a prefill origin, which is what the P/D fields name: the origin's
 * `pd.engineHost` when its engines talk on another network than the router's (a pod IP behind a
 * public URL), else the host of its URL (production-stack overwrites vLLM's `remote_host` the
 * same way: vLLM answers `localhost` unless told otherwise). docs/api.md, "Disaggregated
 * prefill/decode".
 */
import { SGLANG_BOOTSTRAP_PORT } from "../../core/settings/pd-settings.ts";
import type { OriginSettings } from "../../core/settings/settings-schema.ts";

/** The origin's engine host as engines dial it: no port, an IPv6 address unbracketed. */
export function engineHost(origin: OriginSettings): string {
  const host = origin.pd?.engineHost ?? new URL(origin.url).hostname;
  return host.startsWith("[") ? host.slice(1, host.lastIndexOf("]")) : host;
}

/** SGLang's bootstrap port of a prefill origin (`pd.bootstrapPort`, else SGLang's 8998). */
export function bootstrapPort(origin: OriginSettings): number {
  return origin.pd?.bootstrapPort ?? SGLANG_BOOTSTRAP_PORT;
}

/**
 * llm-d's `x-prefiller-host-port`: `pd.engineHost` as given when it names a port, else its host
 * (or the URL's) with the URL's port (the scheme's when the URL names none).
 */
export function prefillerHostPort(origin: OriginSettings): string {
  const url = new URL(origin.url);
  const given = origin.pd?.engineHost;
  if (given !== undefined && /:\d+$/.test(given) && !given.endsWith("]")) return given;
  const host = given ?? url.hostname;
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${host}:${port}`;
}
