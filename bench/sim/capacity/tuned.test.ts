import { describe, expect, it } from "vitest";
import { policyOf } from "../../../src/core/policies/index.ts";
import { bestPoint, GRIDS, gridChoices, TUNABLE, type TunedFile, tunedChoice } from "./tuned.ts";

const FILE: TunedFile = {
  command: "npm run bench:tune -- --seeds 2",
  trace: "conversation_trace.jsonl",
  origins: 8,
  fleet: null,
  objective: "p90:2000",
  split: "tune",
  seeds: [1, 2],
  cost: null,
  policies: {
    dynamo: { grid: [], chosen: { overlapWeight: 4, temperature: 0 } },
  },
};

describe("tuned baselines", () => {
  it("grids every baseline's knobs with upstream's default first, and llm-d's guide's 3/2/2", () => {
    for (const policy of TUNABLE) {
      const [first] = gridChoices(policy);
      const defaults = policyOf(policy);
      for (const [k, v] of Object.entries(first?.params ?? {})) {
        expect(defaults).toHaveProperty(k, v);
      }
      // Every point is a valid parameter set.
      for (const c of gridChoices(policy)) expect(() => policyOf(policy, c.params)).not.toThrow();
    }
    for (const policy of ["llm-d", "llm-d-precise"] as const) {
      expect(GRIDS[policy]).toContainEqual({ prefixWeight: 3, queueWeight: 2, kvWeight: 2 });
    }
    expect(TUNABLE).not.toContain("cost");
  });

  it("selects NAME@tuned's committed values, and refuses cost and untuned baselines", () => {
    expect(tunedChoice("dynamo", FILE)).toEqual({
      policy: "dynamo",
      label: "dynamo@tuned",
      params: { overlapWeight: 4, temperature: 0 },
    });
    expect(() => tunedChoice("cost", FILE)).toThrow(/cost never is/);
    expect(() => tunedChoice("llm-d", FILE)).toThrow(/no tuned values/);
  });

  it("chooses the highest mean capacity, the earlier point on a tie", () => {
    const at = (mean: number) => ({ mean, min: mean, max: mean });
    const grid = [
      { params: { w: 1 }, capacityRps: at(5) },
      { params: { w: 2 }, capacityRps: at(6) },
      { params: { w: 3 }, capacityRps: at(6) },
    ];
    expect(bestPoint(grid)).toEqual({ w: 2 });
  });
});
