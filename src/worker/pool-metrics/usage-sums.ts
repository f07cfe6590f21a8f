/**
 * @module
 * Token counts summed over the requests whose engine reported its usage: the one place the
 * Worker's figures add tokens up, per origin (`PoolMetrics`, the `*_tokens_total` counters) and
 * per time bucket (`TimeSeries`, the dashboard's hit rates), so both count the same requests
 * the same way. A request counts when the engine gave both `prompt_tokens` and `cached_tokens`;
 * its matched (predicted) tokens count up to its prompt, so prediction and truth share a scale
 * (the router estimates prompt tokens from bytes, and the estimate can exceed the engine's count).
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

/** Add `report`'s usage to `sums`; a report without usage adds nothing. */
export function addUsage(sums: UsageSums, report: RequestReport): void {
  const { promptTokens, cachedTokens } = report;
  if (promptTokens === undefined || cachedTokens === undefined) return;
  sums.usageReports++;
  sums.promptTokens += promptTokens;
  sums.cachedTokens += cachedTokens;
  sums.matchedTokens += Math.min(report.matchedTokens, promptTokens);
}
