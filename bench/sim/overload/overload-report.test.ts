import { describe, expect, it } from "vitest";
import { overloadTargets } from "./overload-report.ts";
import type { OverloadRun } from "./overload-run.ts";

/** Two-keys at load 2 with admission, each key with half the goodput: all the target reads. */
const TWO_KEYS = {
  scenario: "two-keys",
  load: 2,
  admission: { maxWaitMs: 500, queueTimeoutMs: 500, maxQueued: 1000 },
  figures: { keys: [{ goodputShare: 0.5 }, { goodputShare: 0.5 }] },
} as unknown as OverloadRun;

describe("overload targets", () => {
  it("judges the targets on the whole conversation trace", () => {
    expect(overloadTargets([TWO_KEYS], 2000, undefined)).toEqual([
      expect.stringMatching(/^met\s+two-keys load 2.0: each key's goodput share >= 45%/),
    ]);
  });

  it("printed the targets for a --limit run, a workload they were not stated for: one line says none applies (issue 24)", () => {
    expect(overloadTargets([TWO_KEYS], 2000, 4000)).toEqual([
      "none with --limit 4000: the targets, and the capacity goodput is a share of, are the whole conversation trace's",
    ]);
  });
});
