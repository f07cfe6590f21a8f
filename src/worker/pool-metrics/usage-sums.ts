/**
 * @module
 * Token counts summed over the requests whose engine reported its usage: the one place the
 * Worker's figures add tokens up, per origin (`PoolMetrics`, the `*_tokens_total` counters) and
 * per time bucket (`TimeSeries`, the dashboard's hit rates), so both count the same requests
 * the same way. A request counts when the engine gave both `prompt_tokens` and `cached_tokens`;
 * its matched (predicted) tokens count up to its prompt, so prediction and truth share a scale
 * (the router estimates prompt tokens from bytes, and the estimate can exceed the engine's count).
 * A disaggregated request's cache hit is its prefill leg's, counted for the prefill origin: the
 * decode engine counts the KV it was sent as cached (vLLM: every prompt token but the last).
 */
import type { RequestReport } from "../request-record/request-report.ts";

export interface UsageSums {
  /** Requests whose usage reported prompt and cached tokens. */
  usageReports: number;
  promptTokens: number;
  cachedTokens: number;
  matchedTokens: number;
}

export function usageSums(): UsageSums {
  return { usageReports: 0, promptTokens: 0, cachedTokens: 0, matchedTokens: 0 };
}

/** The usage that says how much of a request's prompt a cache held, and whose cache it was. */
export interface CacheUsage {
  readonly origin: string | null;
  readonly promptTokens?: number | undefined;
  readonly cachedTokens?: number | undefined;
  readonly matchedTokens: number;
}

/** The prefill leg's usage for a disaggregated request, else the serving origin's. */
export function cacheUsage(report: RequestReport): CacheUsage {
  const { prefill } = report;
  if (prefill)
    return { origin: prefill.origin, matchedTokens: prefill.matchedTokens, ...prefill.usage };
  return report;
}

/** Add a request's cache usage (`cacheUsage`) to `sums`; one without usage adds nothing. */
export function addUsage(sums: UsageSums, usage: CacheUsage): void {
  const { promptTokens, cachedTokens } = usage;
  if (promptTokens === undefined || cachedTokens === undefined) return;
  sums.usageReports++;
  sums.promptTokens += promptTokens;
  sums.cachedTokens += cachedTokens;
  sums.matchedTokens += Math.min(usage.matchedTokens, promptTokens);
}
