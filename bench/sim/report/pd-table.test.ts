import { describe, expect, it } from "vitest";
import type { BenchResult, PolicyResult } from "../../../sim/fleet/result-types.ts";
import type { FleetName, PdComparison } from "../pd/pd-comparison.ts";
import { pdTargetLines } from "./pd-table.ts";

/** A comparison of `cost` with one seed per fleet: only what the target lines read is set. */
function comparison(run: Partial<BenchResult>): PdComparison {
  const fleets: FleetName[] = ["aggregated", "conditional", "always"];
  const cost = (itl: number, ttft: number) =>
    ({
      policy: "cost",
      itlMs: { p99: itl },
      tpotMs: { p99: itl },
      ttftMs: { p90: ttft },
    }) as unknown as PolicyResult;
  const figures: Partial<Record<FleetName, PolicyResult>> = {
    aggregated: cost(100, 1000),
    conditional: cost(40, 900),
    always: cost(30, 1500),
  };
  return {
    prefill: 2,
    decode: 6,
    seeds: [1],
    fleets,
    runs: fleets.map((fleet) => ({
      fleet,
      seed: 1,
      result: { ...run, results: [figures[fleet]] } as BenchResult,
    })),
  };
}

describe("P/D target lines", () => {
  it("printed every target whatever the workload: only those stated for the one it ran (issue 24)", () => {
    const long = pdTargetLines(
      comparison({ trace: "conversation_trace.jsonl", outputScale: 4, load: 0.3 }),
      "cost",
    );
    expect(long).toHaveLength(2);
    expect(long.every((line) => line.startsWith("long prompts:"))).toBe(true);
    expect(long[0]).toMatch(/p99 ITL <= 0.5x aggregated: 0.40x \(0.40-0.40\) -> met/);

    const short = pdTargetLines(
      comparison({ trace: "AzureLLMInferenceTrace_conv.csv", outputScale: 1, load: 0.5 }),
      "cost",
    );
    expect(short).toHaveLength(2);
    expect(short.every((line) => line.startsWith("short prompts:"))).toBe(true);

    const other = pdTargetLines(
      comparison({ trace: "conversation_trace.jsonl", outputScale: 1, load: 0.8 }),
      "cost",
    );
    expect(other).toEqual([expect.stringMatching(/^none for this workload: targets are for long/)]);
  });
});
