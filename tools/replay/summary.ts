/**
 * The table `npm start` ends with: per policy, cache hits, time to first token, spread. TTFT
 * quantiles are the benchmark's (nearest rank, sim/report/stats.ts), over the requests that
 * succeeded with a first token; null, printed "-", when none did.
 */
import { quantile } from "../../sim/report/stats.ts";
import { formatTable } from "../../sim/report/table.ts";
import type { ReplayResult } from "./replay.ts";

export interface PolicySummary {
  policy: string;
  requests: number;
  failed: number;
  cachedRatio: number;
  ttftP50Ms: number | null;
  ttftP90Ms: number | null;
  ttftP99Ms: number | null;
  perOrigin: Record<string, number>;
}

export function summarise(
  policy: string,
  results: readonly ReplayResult[],
  origins: readonly string[],
): PolicySummary {
  const ok = results.filter((r) => r.ok);
  const ttft = Float64Array.from(
    ok.map((r) => r.ttftMs ?? Number.NaN).filter((t) => Number.isFinite(t)),
  ).sort();
  const prompt = ok.reduce((s, r) => s + r.promptTokens, 0);
  const cached = ok.reduce((s, r) => s + r.cachedTokens, 0);
  const perOrigin = Object.fromEntries(origins.map((o) => [o, 0]));
  for (const r of ok) if (r.origin) perOrigin[r.origin] = (perOrigin[r.origin] ?? 0) + 1;
  const ttftAt = (q: number) => (ttft.length > 0 ? quantile(ttft, q) : null);
  return {
    policy,
    requests: results.length,
    failed: results.length - ok.length,
    cachedRatio: prompt > 0 ? cached / prompt : 0,
    ttftP50Ms: ttftAt(0.5),
    ttftP90Ms: ttftAt(0.9),
    ttftP99Ms: ttftAt(0.99),
    perOrigin,
  };
}

export function formatSummaries(rows: readonly PolicySummary[]): string {
  const origins = Object.keys(rows[0]?.perOrigin ?? {});
  const header = [
    "policy",
    "requests",
    "failed",
    "cached tokens",
    "TTFT p50 ms",
    "TTFT p99 ms",
    ...origins,
  ];
  const ms = (v: number | null) => (v === null ? "-" : v.toFixed(0));
  const cells = rows.map((r) => [
    r.policy,
    String(r.requests),
    String(r.failed),
    `${(100 * r.cachedRatio).toFixed(1)}%`,
    ms(r.ttftP50Ms),
    ms(r.ttftP99Ms),
    ...origins.map((o) => String(r.perOrigin[o] ?? 0)),
  ]);
  return formatTable(cells, { header });
}
