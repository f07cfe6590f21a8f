import { describe, expect, it } from "vitest";
import { formatSpread } from "../report/spread.ts";
import { capacityPage, capacityTable, capacityTargets } from "./capacity-report.ts";
import type { CapacityPolicyResult, CapacityResult } from "./capacity-run.ts";
import type { ProbeRecord } from "./probe.ts";

function probe(offeredRps: number, p90: number, pass: boolean): ProbeRecord {
  return {
    offeredRps,
    load: offeredRps / 10,
    traceRate: offeredRps / 3,
    achievedRps: offeredRps,
    halfOfferedRps: offeredRps,
    hitRate: 0.15,
    ttftMs: { mean: p90 / 2, p50: p90 / 3, p90, p99: p90 * 3 },
    verdict: {
      objectiveMet: pass,
      keepsUp: true,
      ttftTrend: { mean: 800, rise: 0, se: 1 },
      backlog: { mean: 10, rise: 0, se: 1, growing: false },
      pass,
    },
  };
}

function policy(name: string, capacity: number): CapacityPolicyResult {
  const s = { mean: capacity, min: capacity * 0.95, max: capacity * 1.05 };
  return {
    policy: name,
    params: { type: name },
    coordination: null,
    capacityRps: { ...s, lo: capacity * 0.9, hi: capacity * 1.1 },
    pairedRatio: { mean: 7 / capacity, lo: 7 / capacity - 0.1, hi: 7 / capacity + 0.1 },
    vsRoundRobin: capacity / 2,
    atCapacity: {
      hitRate: { mean: 0.15, min: 0.15, max: 0.15 },
      hitRateVsFleetOracle: { mean: 0.96, min: 0.95, max: 0.97 },
      ttftMs: { p50: s, p90: s, p99: s },
    },
    seeds: [
      {
        seed: 1,
        capacityRps: capacity,
        failedAtRps: capacity * 1.02,
        status: "bracketed",
        probes: [probe(capacity, 1900, true), probe(capacity * 1.02, 2100, false)],
      },
    ],
  };
}

const RESULT: CapacityResult = {
  trace: "t<x>.jsonl",
  profile: "llama-3.1-8b-h100",
  fleet: null,
  fleetPrior: null,
  origins: 8,
  split: null,
  arrivals: "jitter",
  requests: 100,
  chunkTokens: 64,
  reportIntervalMs: 1000,
  reportDelayMs: 100,
  objective: "p90:2000",
  keepUpRatio: 0.97,
  resolution: 0.02,
  seeds: [
    {
      seed: 1,
      window: null,
      requests: 100,
      loadOneRps: 10,
      oracleHitRate: 0.3,
      fleetOracleHitRate: 0.16,
    },
  ],
  results: [policy("round-robin", 2), policy("cache-aware", 5), policy("cost", 7)],
  ceilings: {
    keepUp: { policy: "cost", capacityRps: { mean: 9, min: 9, max: 9, lo: 9, hi: 9 } },
    oracle: { capacityRps: { mean: 14, min: 14, max: 14, lo: 14, hi: 14 } },
  },
  edgeRatio: [],
};

describe("capacity report", () => {
  it("prints one row per policy with the spread over seeds, its interval and the paired ratio", () => {
    const lines = capacityTable(RESULT).split("\n");
    expect(lines.slice(0, 5)).toHaveLength(2 + 3);
    expect(lines[4]).toMatch(/^cost\s+7\.00 \(6\.65-7\.35\)\s+6\.30-7\.70\s+1\s+0\.50\s+3\.50/);
    expect(lines[3]).toMatch(/^cache-aware .* 1\.40 \[1\.30, 1\.50\]\s+0\.36/);
    expect(formatSpread({ mean: 3, min: 3, max: 3 }, 1)).toBe("3.0");
  });

  it("prints a margin under 5% as within noise", () => {
    const close = { ...RESULT, results: [policy("dynamo@tuned", 6.8), policy("cost", 7)] };
    expect(capacityTable(close)).toMatch(/dynamo@tuned .* 1\.03 \[0\.93, 1\.13\] within noise/);
    expect(capacityTable(RESULT)).not.toMatch(/within noise/);
  });

  it("prints both ceilings under the table", () => {
    const text = capacityTable(RESULT);
    expect(text).toMatch(/keep-up ceiling \(cost, no latency objective\): 9\.00 req\/s/);
    expect(text).toMatch(/oracle ceiling .*: 14\.00 req\/s/);
  });

  it("prints the capacity targets for cost with figures and verdicts", () => {
    const lines = capacityTargets(RESULT);
    expect(lines[0]).toMatch(/7\.00 vs 1\.25 x cache-aware 5\.00 -> met \(1\.40x\)/);
    expect(lines[1]).toMatch(/7\.00 vs 3 x 2\.00 -> met \(3\.50x\)/);
    expect(lines[2]).toMatch(/0\.960 x -> met/);
  });

  it("renders a self-contained page with the chart, the objective's line and the capacity marks", () => {
    const html = capacityPage(RESULT);
    expect(html.match(/<svg /g)?.length).toBe(2);
    expect(html.match(/<circle /g)?.length).toBe(3);
    expect(html).toContain("objective p90 &lt;= 2,000 ms");
    expect(html).not.toMatch(/<script|<link|src=|@import/i);
    expect(html).toContain("t&lt;x&gt;.jsonl");
  });
});
