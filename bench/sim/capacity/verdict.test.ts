import { describe, expect, it } from "vitest";
import type { PolicyResult } from "../../../sim/fleet/result-types.ts";
import { backlogOf, parseObjective, verdictOf } from "./verdict.ts";

/**
 * A replay's result with only what the verdict reads: TTFT quantiles, the second half's counts
 * (arrivals over 0..100 s, so the half is 50..100 s) and a timeline of 1 s buckets whose
 * waiting requests follow `backlog` and whose two origins each run `running` requests.
 */
function result(
  backlog: (t: number) => number,
  completed = 1000,
  p90 = 1500,
  running: (t: number) => number = (t) => 100 + 10 * Math.sin(t),
): PolicyResult {
  const waiting = Array.from({ length: 110 }, (_, b) => backlog(b + 0.5));
  const perOrigin = waiting.map((w, b) => w / 2 + running(b + 0.5));
  return {
    ttftMs: { mean: 900, p50: 500, p90, p99: 5000 },
    secondHalf: { fromMs: 50_000, toMs: 100_000, arrived: 1000, completed },
    timeline: { bucketMs: 1000, outstanding: [perOrigin, perOrigin], waiting },
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

  it("fails a fleet whose requests in system rise by over 3% of the half's arrivals", () => {
    const objective = parseObjective("p90:2000");
    // 1,000 arrivals in the half; each origin's running requests rise 14.5 (29 in all) or 15.5.
    const rising = (by: number) => (t: number) => 100 + (by * Math.max(0, t - 50)) / 50;
    expect(
      verdictOf(
        result(() => 0, 1000, 1500, rising(14.5)),
        objective,
      ).keepsUp,
    ).toBe(true);
    const behind = verdictOf(
      result(() => 0, 1000, 1500, rising(15.5)),
      objective,
    );
    expect(behind).toMatchObject({ keepsUp: false, pass: false });
    expect(behind.inSystem.rise).toBeCloseTo(31, 0);
  });

  it("a fleet with no queue keeps up though its last seconds' arrivals have not finished (synthetic-8's false failures)", () => {
    // Completions 0.96 of arrivals in the half: the count in system is higher at the half's end
    // than at its start only because a burst arrived just before it ended. No queue, a flat
    // count in system: the fleet keeps up.
    const burst = (t: number) => 10 + 4 * Math.sin(3 * t) + (t > 98 && t < 100 ? 20 : 0);
    const v = verdictOf(
      result(() => 0, 960, 1500, burst),
      parseObjective("p90:2000"),
    );
    expect(v).toMatchObject({ keepsUp: true, pass: true });
    expect(v.inSystem.rise).toBeLessThan(30);
  });

  it("counts only the rise beyond two standard errors of the fit: bursts pass, a steady climb does not", () => {
    const objective = parseObjective("p90:2000");
    // In system, over both origins: a rise of 40 (4% of the half's arrivals) across the half,
    // under swings of +-30 (a short window of a bursty trace) or of +-1.
    const total = (swing: number) => (t: number) =>
      43 + swing * Math.sin(2.1 * t) + (40 * Math.max(0, t - 50)) / 50;
    const bursty = verdictOf(
      result(
        () => 0,
        1000,
        1500,
        (t) => total(30)(t) / 2,
      ),
      objective,
    );
    expect(bursty.inSystem.rise).toBeGreaterThan(30);
    expect(bursty).toMatchObject({ keepsUp: true, pass: true });
    const steady = verdictOf(
      result(
        () => 0,
        1000,
        1500,
        (t) => total(1)(t) / 2,
      ),
      objective,
    );
    expect(steady.inSystem.rise).toBeCloseTo(40, -1);
    expect(steady.keepsUp).toBe(false);
  });

  it("calls a backlog growing since the start, or since mid-run, growing", () => {
    expect(backlogOf(result((t) => 2 * t)).growing).toBe(true);
    expect(backlogOf(result((t) => 40 + Math.max(0, t - 50)))).toMatchObject({ growing: true });
    // Fitted rise over the half: 50 s at 2 requests/s.
    expect(backlogOf(result((t) => 2 * t)).rise).toBeCloseTo(100, 0);
  });

  it("a bursty queue whose fitted rise is within two standard errors is not growing (synthetic-8)", () => {
    // A queue of about 40 rising 20 across the half (over a third of its mean, over 1% of the
    // arrivals) under swings of +-30 is the trace's bursts; under swings of +-1 it is growth.
    const queue = (swing: number) => (t: number) =>
      40 + swing * Math.sin(2.1 * t) + (20 * Math.max(0, t - 50)) / 50;
    const bursty = backlogOf(result(queue(30)));
    expect(bursty.rise).toBeGreaterThan(40 / 3);
    expect(bursty.growing).toBe(false);
    expect(backlogOf(result(queue(1))).growing).toBe(true);
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
