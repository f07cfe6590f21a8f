/**
 * The benchmark's JSON: one document per run, one entry per policy. The names required by the
 * issue (`trace`, `origins`, `load`, `requests`, `oracleHitRate`, `fleetOracleHitRate`, and per
 * policy `hitRate`, `ttftMs`, `e2eMs`, `throughputRps`, `imbalance`, `overflowRate`,
 * `fallbackRate`) are kept; the rest explain them. No wall-clock value appears here, so one seed
 * gives byte-identical JSON.
 */
import type { Information } from "./information.ts";
import type { Spread } from "./inter-token.ts";
import type { DisaggregationMode } from "./pd-fleet.ts";

export interface PolicyResult {
  /** The policy, or `cost x0.7` for a run whose settings' prefill speed was mis-calibrated. */
  policy: string;
  /** What the policy's router was told, and how late (information.ts). */
  information?: Information;
  /**
   * Engine-reported cached prompt tokens / prompt tokens (for a disaggregated request, its
   * prefill engine's: what saved prefill work).
   */
  hitRate: number;
  ttftMs: { mean: number; p50: number; p90: number; p99: number };
  e2eMs: { p50: number; p99: number };
  /** Every gap between consecutive output tokens, pooled over requests (vLLM's ITL). */
  itlMs: Spread;
  /** Per request: mean time between its output tokens (TPOT), over requests (inter-token.ts). */
  tpotMs: Spread;
  /** Per request: longest gap between two of its output tokens, over requests. */
  itlMaxGapMs: Spread;
  /** Completed requests per second of simulated time, first arrival to last completion. */
  throughputRps: number;
  /**
   * Requests that arrived and that completed in the second half of the arrival window (from
   * midway between the first and last arrival to the last): in a fleet that keeps up they are
   * equal up to noise, whatever the requests' latency; in one that falls behind, completed /
   * arrived is its capacity over the offered rate (`npm run bench:capacity`).
   */
  secondHalf: { fromMs: number; toMs: number; arrived: number; completed: number };
  /** Max / mean over origins of prefill tokens computed (engine truth). */
  imbalance: number;
  /**
   * Share of requests sent to an origin whose engine held a shorter cached prefix than another
   * origin's at arrival (engine truth): affinity given up, for load or for lack of knowledge.
   */
  overflowRate: number;
  /** Share of requests the router could not place, routed by the Worker's rendezvous fallback. */
  fallbackRate: number;
  /** Decisions by the policy's branch (`decision.reason`). */
  reasons: Record<string, number>;
  /** What the router's index predicted cached against what the engines reported. */
  indexAccuracy: { predictedTokens: number; cachedTokens: number };
  /**
   * The router's estimate of queued prefill work per origin against the engines' backlog, both
   * in short-context token equivalents (queue-probe.ts), averaged over sample ticks and origins.
   */
  queueEstimate: { routerTokens: number; engineTokens: number; absErrorTokens: number };
  /**
   * Engine time iterating (busy) and iterating with prefill in the batch (prefill), over
   * origins x (first arrival to last completion).
   */
  utilisation: { busy: number; prefill: number };
  preemptions: number;
  evictedBlocks: number;
  /** Completions that came after the router's lease on them had expired. */
  expiredLeases: number;
  perOrigin: { id: string; requests: number; prefilledTokens: number }[];
  /** TTFT quantiles p0, p1, ..., p100 (for the CDF chart). */
  ttftCdfMs: number[];
  /**
   * Requests running or waiting at each origin, and requests waiting for admission over the
   * whole fleet, averaged over each bucket of report ticks; per bucket of arrival time, the
   * requests that arrived in it and their mean TTFT (0 where none arrived).
   */
  timeline: {
    bucketMs: number;
    outstanding: number[][];
    waiting: number[];
    arrivals: number[];
    ttftByArrivalMs: number[];
  };
  /** A P/D fleet's figures; null for an aggregated fleet. */
  pd: PdResult | null;
}

export interface PdResult {
  /** Decisions by `pdReason` (router/disaggregation.ts). */
  reasons: Record<string, number>;
  /** Share of requests prefilled on a prefill origin. */
  remoteRate: number;
  /** Share of requests a prefill origin served whole (`pd:whole-on-prefill`). */
  wholeOnPrefillRate: number;
  /** KV transfers, prefill engine to decode engine. */
  kvTransferMs: { mean: number; p50: number; p99: number };
}

export interface BenchResult {
  trace: string;
  profile: string;
  /** A mixed fleet's `--fleet` spec (its origins' profiles), or null. */
  fleet: string | null;
  origins: number;
  load: number;
  arrivals: string;
  seed: number;
  requests: number;
  chunkTokens: number;
  /** Simulated ms per trace ms that the load setting chose. */
  timeScale: number;
  /** This router's webhooks (policies of this router); baselines: see each `information`. */
  reportIntervalMs: number;
  reportDelayMs: number;
  /** Delay of scrapes, polls and KV events that baselines read from engines directly. */
  engineDelayMs?: number;
  /** Output lengths were the trace's times this (`--output-scale`). */
  outputScale: number;
  /** The fleet's prefill/decode split and disaggregation mode; null when aggregated. */
  pd: { prefill: number; decode: number; mode: DisaggregationMode } | null;
  oracleHitRate: number;
  fleetOracleHitRate: number;
  results: PolicyResult[];
}
