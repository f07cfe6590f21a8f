/**
 * Time to move a prompt's KV cache from a prefill engine to a decode engine (disaggregated
 * serving): the bytes of the tokens the decode engine does not already hold, over the link
 * between them, plus the transfer's fixed cost (profiles.ts states the link and the cost).
 * vLLM's NixlConnector pulls only the blocks the decode engine lacks, so `tokens` is the
 * prompt's KV minus the decode engine's cached prefix.
 */
import type { EngineProfile } from "./profiles.ts";

export function kvTransferMs(profile: EngineProfile, tokens: number): number {
  const bytes = Math.max(0, tokens) * profile.kvBytesPerToken;
  return profile.kvTransferLatencyMs + (bytes / profile.kvLinkBytesPerSecond) * 1000;
}
