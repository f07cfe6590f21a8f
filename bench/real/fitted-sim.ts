/**
 * The simulator on a real run's requests: the same prompts (hashed as the Worker hashes them),
 * the same arrival times and output lengths, a fleet of the same size, and an engine profile
 * fitted to the real engines from their counters (engine-counters.ts): prefill speed over the
 * runs (prompt tokens over prompt seconds, all engines and policies), decode speed from one
 * request on an idle engine; cache size from `--cache-ram` and the slots' context; concurrency
 * from the slots. llama.cpp counts each request's time whole even when it shared a batch with
 * another slot's work, so the runs' prefill speed is a lower bound of the engines' (two prompts
 * prefilled together each count the whole time), and their decode time per token includes
 * waiting out other slots' prefill batches, which the simulator models itself: decode comes
 * from the idle probe. (An idle engine's prefill speed shared out over the cores, the first
 * fit tried, was lower still: the simulated fleet fell behind where the real one kept up.)
 *
 * Units: the simulator counts the router's tokens (4 bytes each), the bench model one token per
 * byte; the profile's speeds and sizes are converted, so times and cached fractions compare.
 *
 * What it cannot model: llama.cpp's prompt cache is each slot's last prompt plus an LRU of whole
 * prompts in host memory (a request takes the slot or saved prompt sharing the longest prefix),
 * not vLLM's paged blocks with a shared LRU; a prefix common to several saved prompts is stored
 * once per prompt there and once here, so the simulator holds more for the same size. Its
 * engines are independent, where the real ones share the machine's cores (and the machine's
 * other jobs), and the profile's one linear speed folds in attention. bench/sim/README.md, "bench:real", says what the gaps come to.
 */
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import { simulatePolicy } from "../../sim/fleet/fleet-sim.ts";
import { informationOf } from "../../sim/fleet/information.ts";
import type { PolicyResult } from "../../sim/fleet/result-types.ts";
import type { Workload } from "../../sim/workload/workload.ts";
import { BYTES_PER_TOKEN } from "../../src/core/chunk-hash.ts";
import { type PolicyType, policyOf } from "../../src/core/policies/index.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import type { ReplayRequest, ReplayResult } from "../../tools/replay/replay.ts";

/** What the real engines were and did, in their own tokens (one per byte). */
export interface RealEngines {
  /** Each engine's prefill speed, engine tokens per second. */
  prefillTokensPerSecond: number;
  /** Each engine's decode step, ms. */
  decodeMsPerToken: number;
  /** Tokens each engine keeps cached (`--cache-ram` and its slots' context). */
  cachedTokens: number;
  slots: number;
  /** llama-server's `-b` default: prompt tokens one decode call takes. */
  batchTokens: number;
  /** Engine tokens per byte of prompt text. */
  tokensPerByte: number;
}

/** The fitted profile, in the router's tokens. */
export function fittedProfile(e: RealEngines): EngineProfile {
  const perRouterToken = BYTES_PER_TOKEN * e.tokensPerByte;
  const prefill = e.prefillTokensPerSecond;
  const decodeMs = e.decodeMsPerToken;
  return {
    name: "llama.cpp fitted",
    model: "bench-real",
    source:
      `llama-server's counters: ${Math.round(prefill)} prompt tokens/s over the runs, ` +
      `${decodeMs.toFixed(1)} ms per output token alone; ${e.cachedTokens} cached tokens, ${e.slots} slots`,
    prefillTokensPerSecond: prefill / perRouterToken,
    // The measured speed is an average over the run's prompts, attention included.
    attentionTokens: 1e12,
    weightsReadMs: decodeMs,
    kvReadMsPerToken: 0,
    overheadMs: 0,
    kvCapacityTokens: Math.floor(e.cachedTokens / perRouterToken),
    kvBytesPerToken: 1,
    maxBatchedTokens: Math.max(1, Math.floor(e.batchTokens / perRouterToken)),
    maxSeqs: e.slots,
    kvLinkBytesPerSecond: 1,
    kvTransferLatencyMs: 0,
  };
}

/** The replayed requests as the simulator's workload (outputs as long as the engines made them). */
export function realWorkload(
  requests: readonly ReplayRequest[],
  results: readonly ReplayResult[],
  chunkBytes: number,
): Workload {
  const keys = requests.map((r) =>
    promptKey({ model: "bench-real", messages: [{ role: "user", content: r.text }] }, chunkBytes),
  );
  const hashStart = new Int32Array(requests.length + 1);
  keys.forEach((k, i) => {
    hashStart[i + 1] = (hashStart[i] as number) + k.chunkHashes.length;
  });
  return {
    model: "bench-real",
    chunkTokens: chunkBytes / BYTES_PER_TOKEN,
    size: requests.length,
    arrivalMs: Float64Array.from(requests, (r) => r.atMs),
    promptTokens: Int32Array.from(keys, (k) => k.promptTokens),
    outputTokens: Int32Array.from(requests, (r, i) =>
      Math.max(1, results[i]?.completionTokens || r.maxTokens),
    ),
    hashStart,
    hashes: Float64Array.from(keys.flatMap((k) => k.chunkHashes)),
    timeScale: 1,
  };
}

export interface SimRunOptions {
  origins: number;
  profile: EngineProfile;
  /** The settings' prefill speed over the profile's (what the real router was told). */
  prefillCalibration: number;
  reportIntervalMs: number;
  seed: number;
}

export function simulateReal(w: Workload, policy: PolicyType, o: SimRunOptions): PolicyResult {
  const information = informationOf(policy, {
    reportIntervalMs: o.reportIntervalMs,
    reportDelayMs: 0,
    engineDelayMs: 0,
    prefillCalibration: o.prefillCalibration,
  });
  return simulatePolicy(w, {
    policy: policyOf(policy),
    origins: o.origins,
    profile: o.profile,
    seed: o.seed,
    information,
  });
}
