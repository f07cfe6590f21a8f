import { describe, expect, it } from "vitest";
import type { BenchResult, PolicyResult } from "../../../sim/fleet/result-types.ts";
import { toJson } from "../../../sim/report/write.ts";
import { benchPage, fleetPage } from "./html.ts";
import { policySpreads, spreadTable } from "./spread.ts";
import { lineChart } from "./svg.ts";
import { resultsTable } from "./table.ts";
import { targetLines } from "./targets.ts";

function policy(name: string, hitRate: number, mean: number, p99: number): PolicyResult {
  return {
    policy: name,
    hitRate,
    ttftMs: { mean, p50: mean / 2, p90: p99 / 2, p99 },
    e2eMs: { p50: mean * 3, p99: p99 * 2 },
    itlMs: { mean: 20, p50: 18, p90: 30, p99: 450 },
    tpotMs: { mean: 20, p50: 18, p90: 30, p99: 45 },
    itlMaxGapMs: { mean: 200, p50: 150, p90: 400, p99: 700 },
    throughputRps: 4,
    secondHalf: { fromMs: 500, toMs: 1000, arrived: 5, completed: 5 },
    imbalance: 1.1,
    overflowRate: 0.1,
    fallbackRate: 0,
    reasons: { x: 10 },
    indexAccuracy: { predictedTokens: 10, cachedTokens: 9 },
    queueEstimate: { routerTokens: 10, engineTokens: 12, absErrorTokens: 3 },
    utilisation: { busy: 0.9, prefill: 0.5 },
    preemptions: 0,
    evictedBlocks: 0,
    expiredLeases: 0,
    perOrigin: [
      { id: "gpu-0", requests: 5, prefilledTokens: 100 },
      { id: "gpu-1", requests: 5, prefilledTokens: 90 },
    ],
    ttftCdfMs: Array.from({ length: 101 }, (_, k) => 10 + k * 10),
    timeline: {
      bucketMs: 1000,
      outstanding: [
        [1, 2, 3],
        [0, 1, 0],
      ],
      waiting: [0, 1, 0],
      arrivals: [2, 3, 0],
      ttftByArrivalMs: [40, 55, 0],
    },
    pd: null,
  };
}

function bench(results: PolicyResult[], oracle = 0.4): BenchResult {
  return {
    trace: "t<x>.jsonl",
    profile: "llama-3.1-8b-h100",
    fleet: null,
    origins: 8,
    load: 0.8,
    arrivals: "spread",
    seed: 1,
    requests: 10,
    chunkTokens: 64,
    timeScale: 0.5,
    reportIntervalMs: 1000,
    reportDelayMs: 100,
    outputScale: 1,
    pd: null,
    oracleHitRate: oracle,
    fleetOracleHitRate: oracle / 2,
    results,
  };
}

const RESULT = bench([
  policy("round-robin", 0.05, 20_000, 90_000),
  policy("prefix-hash", 0.05, 30_000, 100_000),
  policy("llm-d", 0.15, 4000, 20_000),
  policy("cost", 0.19, 1900, 15_000),
]);

describe("reports", () => {
  it("renders a self-contained page: inline SVG, no scripts, no external resources", () => {
    const html = benchPage(RESULT);
    expect(html.match(/<svg /g)?.length).toBe(4);
    expect(html).not.toMatch(/<script|<link|src=|@import/i);
    expect(html.replaceAll("http://www.w3.org/2000/svg", "")).not.toMatch(/https?:/);
    expect(html).toContain("t&lt;x&gt;.jsonl");
  });

  it("headed the per-origin load 'prefix-hash vs cost' when they were not run: names those that ran (issue 24)", () => {
    expect(benchPage(RESULT)).toContain("<h2>Per-origin load: prefix-hash vs cost</h2>");
    const costOnly = benchPage(
      bench([policy("round-robin", 0.05, 2e4, 9e4), policy("cost", 0.19, 1900, 15_000)]),
    );
    expect(costOnly).toContain("<h2>Per-origin load: cost</h2>");
    expect(costOnly).not.toContain("prefix-hash");
    const neither = benchPage(bench([policy("round-robin", 0.05, 2e4, 9e4)]));
    expect(neither).not.toContain("Per-origin load");
  });

  it("renders the fleet sweep", () => {
    const html = fleetPage({
      sizes: [2, 4],
      seeds: [1, 2],
      runs: [
        { ...RESULT, origins: 2 },
        { ...RESULT, origins: 2, seed: 2 },
        { ...RESULT, origins: 4 },
        { ...RESULT, origins: 4, seed: 2 },
      ],
    });
    expect(html.match(/<svg /g)?.length).toBe(2);
    expect(html).toContain("4 origins, seed 2");
    expect(html).toContain("mean over seeds 1, 2");
  });

  it("prints the targets for cost with figures and verdicts, at the loads they name", () => {
    const atPoint8 = targetLines(RESULT);
    expect(atPoint8).toHaveLength(2);
    expect(atPoint8[0]).toMatch(/0\.19 vs 0\.1800 -> met/);
    expect(atPoint8[1]).toMatch(/0\.8 x llm-d 20,000 ms = 16,000 ms -> met/);
    const atOne = targetLines({ ...RESULT, load: 1 });
    expect(atOne).toHaveLength(2);
    expect(atOne[1]).toMatch(/1,900 ms vs 20,000 ms \/ 10 -> met \(10\.5x\)/);
    // The hit-rate target names 8 and 16 origins.
    expect(targetLines({ ...RESULT, origins: 32 })).toHaveLength(1);
    expect(targetLines({ ...RESULT, load: 0.6 })).toEqual([
      "none at load 0.6: the targets name load 0.8 and 1",
    ]);
    const noSharing = targetLines({ ...bench(RESULT.results, 0), load: 0.6 });
    expect(noSharing).toHaveLength(1);
    expect(noSharing[0]).toMatch(/no sharing: .* round-robin 90,000 ms -> met/);
  });

  it("prints one table row per policy and compact JSON arrays", () => {
    expect(resultsTable(RESULT).split("\n")).toHaveLength(2 + 4);
    expect(toJson({ a: [1, 2.5, -3], b: { c: "x" } })).toBe(
      '{\n  "a": [1, 2.5, -3],\n  "b": {\n    "c": "x"\n  }\n}\n',
    );
  });

  it("shows each policy's figures over seeds as mean (min-max)", () => {
    const other = bench([
      policy("round-robin", 0.07, 24_000, 80_000),
      policy("prefix-hash", 0.05, 30_000, 100_000),
      policy("llm-d", 0.15, 4000, 20_000),
      policy("cost", 0.21, 2100, 17_000),
    ]);
    const spreads = policySpreads([RESULT, { ...other, seed: 2 }]);
    expect(spreads.find((s) => s.policy === "cost")?.ttftMs.p99).toEqual({
      mean: 16_000,
      min: 15_000,
      max: 17_000,
    });
    const table = spreadTable(spreads);
    expect(table).toMatch(/cost\s+0\.2000 \(0\.1900-0\.2100\)\s+2,000 \(1,900-2,100\)/);
    expect(table).toMatch(/prefix-hash\s+0\.0500\s+30,000\s/);
    const html = benchPage(RESULT, { seeds: [1, 2], table });
    expect(html).toContain("Over seeds 1, 2: mean (min-max)");
  });

  it("labels a log axis that spans less than a decade at 1, 2 and 5 times powers of ten", () => {
    const series = [
      {
        label: "a",
        color: "#000",
        points: [
          [1, 1500],
          [2, 9000],
        ] as const,
      },
    ];
    const svg = lineChart(series, { title: "t", xLabel: "x", yLabel: "y", yLog: true });
    expect(svg).toContain(">2k</text>");
    expect(svg).toContain(">5k</text>");
    expect(svg).not.toContain(">1.5k</text>");
  });
});
