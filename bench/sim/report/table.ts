/**
 * The results as a plain-text table for the terminal (benchmarks print tables): one row per
 * policy, hit rate against the fleet oracle, TTFT and end-to-end quantiles, throughput,
 * imbalance and overflow.
 */
import { formatTable } from "../../../sim/report/table.ts";
import type { BenchResult } from "../run/result-types.ts";

const int = (v: number) => Math.round(v).toLocaleString("en-US");

export function headerLines(r: BenchResult): string[] {
  return [
    `${r.trace} | ${r.origins} origins | load ${r.load} | ${r.profile} | ` +
      `${r.requests.toLocaleString("en-US")} requests | arrivals ${r.arrivals} | seed ${r.seed}`,
    `oracle hit rate ${r.oracleHitRate} (one infinite cache) | fleet oracle ` +
      `${r.fleetOracleHitRate} (one LRU of the fleet's KV) | time scale ${r.timeScale}`,
  ];
}

export function resultsTable(r: BenchResult): string {
  const header = [
    "policy",
    "hit",
    "/fleet",
    "TTFT mean",
    "p50",
    "p90",
    "p99 ms",
    "e2e p50",
    "p99 ms",
    "req/s",
    "imbal",
    "overflow",
    "busy",
  ];
  const rows = r.results.map((p) => [
    p.policy,
    p.hitRate.toFixed(4),
    r.fleetOracleHitRate > 0 ? (p.hitRate / r.fleetOracleHitRate).toFixed(2) : "-",
    int(p.ttftMs.mean),
    int(p.ttftMs.p50),
    int(p.ttftMs.p90),
    int(p.ttftMs.p99),
    int(p.e2eMs.p50),
    int(p.e2eMs.p99),
    p.throughputRps.toFixed(2),
    p.imbalance.toFixed(3),
    p.overflowRate.toFixed(3),
    p.utilisation.busy.toFixed(2),
  ]);
  return formatTable(rows, { header });
}
