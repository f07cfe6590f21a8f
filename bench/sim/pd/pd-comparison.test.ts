import { describe, expect, it } from "vitest";
import { conversationSpec } from "../../../sim/fleet/test-spec.ts";
import { toJson } from "../../../sim/report/write.ts";
import { pdTable, pdTargetLines, ratio } from "../report/pd-table.ts";
import { runPdComparison } from "./pd-comparison.ts";

const TINY = conversationSpec({ limit: 48, arrivals: "spread", load: 0.8, origins: 4 });
const PD = { prefill: 1, decode: 3, mode: "conditional" as const };

describe("P/D comparison", () => {
  it("replays every fleet with every seed, in a fixed order, byte-identical", async () => {
    const run = (concurrency: number) =>
      runPdComparison(TINY, PD, ["cost"], { seeds: [1, 2], modes: ["conditional"], concurrency });
    const c = await run(2);
    expect(c.runs.map((r) => [r.fleet, r.seed])).toEqual([
      ["aggregated", 1],
      ["conditional", 1],
      ["aggregated", 2],
      ["conditional", 2],
    ]);
    // Equal GPU count: the aggregated fleet has prefill + decode origins, all serving alone.
    expect(c.runs[0]?.result).toMatchObject({ origins: 4, pd: null });
    expect(c.runs[1]?.result.pd).toEqual(PD);
    expect(toJson(await run(1))).toBe(toJson(c));
    // A table row per fleet, and the targets as ratios of the same seeds' figures.
    expect(pdTable(c, "cost").split("\n")).toHaveLength(2 + 2);
    const itl = ratio(c, "cost", "conditional", "aggregated", (p) => p.itlMs.p99);
    const [a1, c1, a2, c2] = c.runs.map((r) => r.result.results[0]?.itlMs.p99 as number);
    expect(itl?.min).toBeCloseTo(
      Math.min((c1 as number) / (a1 as number), (c2 as number) / (a2 as number)),
      3,
    );
    // Load 0.8 on 48 requests is no workload the targets name (report/pd-table.test.ts).
    expect(pdTargetLines(c, "cost")).toEqual([expect.stringMatching(/^none for this workload/)]);
  }, 60_000);
});
