/**
 * The results as a plain-text table for the terminal (benchmarks print tables): one row per
 * policy, hit rate against the fleet oracle, TTFT, inter-token latency (p50 and p99 of every
 * gap between tokens, p99 over requests of their mean gap, TPOT) and end-to-end quantiles,
 * throughput, imbalance and overflow; with a P/D fleet, the share prefilled remotely.
 */

import type { BenchResult } from "../../../sim/fleet/result-types.ts";
import { formatTable } from "../../../sim/report/table.ts";

const int = (v: number) => Math.round(v).toLocaleString("en-US");

export function headerLines(r: BenchResult): string[] {
  const fleet = r.pd ? ` (P/D ${r.pd.prefill}:${r.pd.decode}, ${r.pd.mode})` : "";
  const outputs = r.outputScale !== 1 ? ` | outputs x${r.outputScale}` : "";
  return [
    `${r.trace} | ${r.origins} origins${fleet} | load ${r.load} | ${r.profile} | ` +
      `${r.requests.toLocaleString("en-US")} requests${outputs} | arrivals ${r.arrivals} | ` +
      `seed ${r.seed}`,
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
    "ITL p50",
    "p99",
    "TPOT p99 ms",
    "e2e p50",
    "p99 ms",
    "req/s",
    "imbal",
    "overflow",
    "busy",
    ...(r.pd ? ["remote"] : []),
  ];
  const rows = r.results.map((p) => [
    p.policy,
    p.hitRate.toFixed(4),
    r.fleetOracleHitRate > 0 ? (p.hitRate / r.fleetOracleHitRate).toFixed(2) : "-",
    int(p.ttftMs.mean),
    int(p.ttftMs.p50),
    int(p.ttftMs.p90),
    int(p.ttftMs.p99),
    p.itlMs.p50.toFixed(1),
    p.itlMs.p99.toFixed(1),
    p.tpotMs.p99.toFixed(1),
    int(p.e2eMs.p50),
    int(p.e2eMs.p99),
    p.throughputRps.toFixed(2),
    p.imbalance.toFixed(3),
    p.overflowRate.toFixed(3),
    p.utilisation.busy.toFixed(2),
    ...(p.pd ? [p.pd.remoteRate.toFixed(3)] : []),
  ]);
  return formatTable(rows, { header });
}
