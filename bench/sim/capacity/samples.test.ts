import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BenchSpec } from "../../../sim/fleet/runner.ts";
import { conversationSpec } from "../../../sim/fleet/test-spec.ts";
import { REPORT_SEED_OFFSET, type Split, sampleSpec } from "./samples.ts";

const SPEC = conversationSpec();

const windowsOf = (seeds: number[], split: Split | null) =>
  seeds.map((_, k) => sampleSpec(SPEC, seeds, k, split).window ?? { from: 0, to: 1 });

describe("workload samples per seed", () => {
  it("gives each seed a disjoint window, the tune split's all before the report split's", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 1000 }),
        (k, first) => {
          const seeds = Array.from({ length: k }, (_, i) => first + i);
          const tune = windowsOf(seeds, "tune");
          const report = windowsOf(seeds, "report");
          for (const ws of [tune, report]) {
            ws.forEach((w, i) => {
              expect(w.to).toBeGreaterThan(w.from);
              if (i > 0) expect(w.from).toBeGreaterThanOrEqual(ws[i - 1]?.to as number);
            });
          }
          expect(tune.at(-1)?.to).toBeLessThanOrEqual(report[0]?.from as number);
          expect(tune[0]?.from).toBe(0);
          expect(report.at(-1)?.to).toBe(1);
        },
      ),
    );
  });

  it("keeps the whole trace for one seed without a split", () => {
    expect(sampleSpec(SPEC, [1], 0, null).window).toBeNull();
    expect(windowsOf([1, 2], null)).toEqual([
      { from: 0, to: 0.5 },
      { from: 0.5, to: 1 },
    ]);
  });

  it("never lets a generated workload's tune and report seeds meet", () => {
    const synthetic: BenchSpec = {
      ...SPEC,
      source: { kind: "synthetic", name: "rag", count: 100, seed: 1 },
    };
    const seedOf = (k: number, split: Split) =>
      (sampleSpec(synthetic, [1, 2, 3], k, split).source as { seed: number }).seed;
    const tune = [0, 1, 2].map((k) => seedOf(k, "tune"));
    const report = [0, 1, 2].map((k) => seedOf(k, "report"));
    expect(tune).toEqual([1, 2, 3]);
    expect(report).toEqual([1, 2, 3].map((s) => s + REPORT_SEED_OFFSET));
  });
});
