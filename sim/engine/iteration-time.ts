/**
 * How long one continuous-batching iteration takes on a profile: a roofline over the batch.
 *
 *   time = overhead + max(compute, memory)
 *   compute = sum over prefill chunks of n/S * (1 + (start + n/2)/A)   linear layers + causal
 *             + sum over decodes of (1 + context/A)/S                   attention over the prefix
 *   memory  = weights read once + decode contexts * KV bytes per token / bandwidth
 *
 * S is the profile's linear prefill speed and A its attention break-even length, so a chunk of n
 * tokens starting at position `start` pays for attending to every earlier token (FlashAttention
 * is compute-bound in prefill). Decode steps are memory-bound until the batch is large, which is
 * why decodes ride almost free inside a prefill iteration (Sarathi-Serve's observation behind
 * chunked prefill). All times in milliseconds.
 */
import type { EngineProfile } from "./profiles.ts";

/** Compute time of prefilling `tokens` tokens whose first sits at position `start`. */
export function prefillMs(profile: EngineProfile, start: number, tokens: number): number {
  const attention = (start + tokens / 2) / profile.attentionTokens;
  return ((tokens * (1 + attention)) / profile.prefillTokensPerSecond) * 1000;
}

/**
 * One iteration: `prefillComputeMs` from `prefillMs` over its chunks, plus `decodes` sequences
 * whose KV contexts sum to `decodeContext` tokens.
 */
export function iterationMs(
  profile: EngineProfile,
  prefillComputeMs: number,
  decodes: number,
  decodeContext: number,
): number {
  const decodeCompute =
    ((decodes + decodeContext / profile.attentionTokens) / profile.prefillTokensPerSecond) * 1000;
  const memory = profile.weightsReadMs + decodeContext * profile.kvReadMsPerToken;
  return profile.overheadMs + Math.max(prefillComputeMs + decodeCompute, memory);
}
