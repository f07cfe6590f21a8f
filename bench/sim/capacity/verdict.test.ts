import { describe, expect, it } from "vitest";
import type { PolicyResult } from "../../../sim/fleet/result-types.ts";
import { backlogOf, parseObjective, verdictOf } from "./verdict.ts";

/**
 * A replay's result with only what the verdict reads: TTFT quantiles, the second half's counts
 * (arrivals over 0..100 s, so the half is 50..100 s) and a timeline of 1 s buckets whose
 * waiting requests follow `backlog`.
 */
function result(backlog: (t: number) => number, completed = 1000, p90 = 1500): PolicyResult {
  const waiting = Array.from({ length: 110 }, (_, b) => backlog(b + 0.5));
  // Running requests rise with the rate; the verdict must not read them.
  const running = waiting.map((_, b) => 100 + 5 * b);
  return {
    ttftMs: { mean: 900, p50: 500, p90, p99: 5000 },
    secondHalf: { fromMs: 50_000, toMs: 100_000, arrived: 1000, completed },
    timeline: { bucketMs: 1000, outstanding: [running, running], waiting },
  } as PolicyResult;
}

describe("probe verdict", () => {
  it("passes a fleet that meets the objective, keeps up and holds its backlog", () => {
    const v = verdictOf(
      result((t) => 40 + 10 * Math.sin(t)),
      parseObjective("p90:2000"),
    );
    expect(v).toMatchObject({ objectiveMet: true, keepsUp: true, pass: true });
    expect(v.backlog.growing).toBe(false);
    expect(v.backlog.mean).toBeCloseTo(40, 0);
  });

  it("reads the quantile the objective names", () => {
    const r = result(() => 40);
    expect(verdictOf(r, parseObjective("p90:1400")).objectiveMet).toBe(false);
    expect(verdictOf(r, parseObjective("p50:600")).objectiveMet).toBe(true);
    expect(verdictOf(r, parseObjective("p99:4999")).pass).toBe(false);
  });

  it("fails a fleet that completes under 97% of the second half's arrivals", () => {
    const objective = parseObjective("p90:2000");
    expect(
      verdictOf(
        result(() => 40, 970),
        objective,
      ).keepsUp,
    ).toBe(true);
    expect(
      verdictOf(
        result(() => 40, 969),
        objective,
      ),
    ).toMatchObject({ keepsUp: false, pass: false });
  });

  it("calls a backlog growing since the start, or since mid-run, growing", () => {
    expect(backlogOf(result((t) => 2 * t)).growing).toBe(true);
    expect(backlogOf(result((t) => 40 + Math.max(0, t - 50)))).toMatchObject({ growing: true });
    // Fitted rise over the half: 50 s at 2 requests/s.
    expect(backlogOf(result((t) => 2 * t)).rise).toBeCloseTo(100, 0);
  });

  it("running requests rising with the rate are not a growing backlog (sessions false positive)", () => {
    // A stable queue rising 10% with the trace's rate, and an empty fleet rising 0 -> 2, both
    // beside running requests that climb from 100 to 650.
    expect(backlogOf(result((t) => 100 + 0.2 * t)).growing).toBe(false);
    expect(backlogOf(result((t) => (t > 75 ? 2 : 0))).growing).toBe(false);
  });

  it.each(["p95:2000", "p90", "p90:0", "p90:-3", "90:2000"])("refuses the objective %j", (text) => {
    expect(() => parseObjective(text)).toThrow(/--slo must be p50\|p90\|p99:MS/);
  });
});
