import { describe, expect, it } from "vitest";
import type { PolicyResult } from "../../../sim/fleet/result-types.ts";
import { backlogOf, parseObjective, verdictOf } from "./verdict.ts";

/**
 * A replay's result with only what the verdict reads: TTFT quantiles, the second half's counts
 * (arrivals over 0..100 s, so the half is 50..100 s) and a timeline of 1 s buckets whose
 * waiting requests follow `backlog`, whose two origins each run `running` requests, and whose
 * 20 arrivals per bucket wait `ttft` ms for their first token on average.
 */
function result(
  backlog: (t: number) => number,
  completed = 1000,
  p90 = 1500,
  running: (t: number) => number = (t) => 100 + 10 * Math.sin(t),
  ttft: (t: number) => number = (t) => 800 + 50 * Math.sin(1.7 * t),
): PolicyResult {
  const waiting = Array.from({ length: 110 }, (_, b) => backlog(b + 0.5));
  const perOrigin = waiting.map((w, b) => w / 2 + running(b + 0.5));
  const arrivals = Array.from({ length: 100 }, () => 20);
  return {
    ttftMs: { mean: 900, p50: 500, p90, p99: 5000 },
    secondHalf: { fromMs: 50_000, toMs: 100_000, arrived: 1000, completed },
    timeline: {
      bucketMs: 1000,
      outstanding: [perOrigin, perOrigin],
      waiting,
      arrivals,
      ttftByArrivalMs: arrivals.map((_, b) => ttft(b + 0.5)),
    },
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

  it("fails a fleet whose time to first token rises by over 3% of the half's duration", () => {
    const objective = parseObjective("p90:2000");
    // The half lasts 50 s: losing 3% of the throughput adds 0.03 / 0.97 x 50 s = 1,546 ms of
    // wait across it.
    const rising = (byMs: number) => (t: number) => 800 + (byMs * Math.max(0, t - 50)) / 50;
    const v = verdictOf(
      result(() => 0, 1000, 1500, undefined, rising(1450)),
      objective,
    );
    expect(v.keepsUp).toBe(true);
    const behind = verdictOf(
      result(() => 0, 1000, 1500, undefined, rising(1650)),
      objective,
    );
    expect(behind).toMatchObject({ keepsUp: false, pass: false });
    expect(behind.ttftTrend.rise).toBeCloseTo(1650, 0);
  });

  it("a fleet with no queue keeps up though its last seconds' arrivals have not finished (synthetic-8's false failures)", () => {
    // Completions 0.96 of arrivals in the half: the count in system is higher at the half's end
    // than at its start only because a burst arrived just before it ended. No queue, a flat
    // count in system, a steady wait: the fleet keeps up.
    const burst = (t: number) => 10 + 4 * Math.sin(3 * t) + (t > 98 && t < 100 ? 20 : 0);
    const v = verdictOf(
      result(() => 0, 960, 1500, burst),
      parseObjective("p90:2000"),
    );
    expect(v).toMatchObject({ keepsUp: true, pass: true });
  });

  it("a fleet whose requests in system follow a rising arrival rate at a steady wait keeps up (conversation-16's false failures)", () => {
    // The trace's own rate rises across the half: the count in system goes 95 -> 174 (a rise of
    // 79, 8% of the half's arrivals, far beyond its scatter) while each request waits as long
    // as before and almost nothing queues. Not a backlog: Little's law, in system = rate x time.
    const v = verdictOf(
      result(
        (t) => 1 + Math.sin(t),
        921,
        1500,
        (t) => (95 + (79 * Math.max(0, t - 50)) / 50 + 3 * Math.sin(2.3 * t)) / 2,
      ),
      parseObjective("p90:2000"),
    );
    expect(v).toMatchObject({ keepsUp: true, pass: true });
    expect(Math.abs(v.ttftTrend.rise)).toBeLessThan(100);
  });

  it("a real backlog still fails: the count and each request's wait both climb", () => {
    // A fleet serving 90% of what arrives: the queue gains 2 requests/s (0 -> 100 across the
    // half), each later request waits 1/9 s more per second (about 5.6 s across it).
    const v = verdictOf(
      result(
        (t) => 2 * Math.max(0, t - 50),
        900,
        1500,
        undefined,
        (t) => 800 + (5600 * Math.max(0, t - 50)) / 50 + 100 * Math.sin(1.7 * t),
      ),
      parseObjective("p90:600000"),
    );
    expect(v).toMatchObject({ objectiveMet: true, keepsUp: false, pass: false });
    expect(v.backlog.growing).toBe(true);
  });

  it("a fleet whose requests wait longer than half the half does not keep up, however flat the wait (synthetic-8's keep-up ceiling above the oracle's)", () => {
    // Far past capacity on a short window: every arrival of the 50 s half waits about 30 s
    // behind a standing queue, the wait falling slightly as the window's rate eases.
    const objective = parseObjective("p90:600000");
    const v = verdictOf(
      result(
        () => 300,
        250,
        40_000,
        undefined,
        (t) => 30_000 - 20 * (t - 50),
      ),
      objective,
    );
    expect(v.ttftTrend.rise).toBeLessThan(0);
    expect(v).toMatchObject({ keepsUp: false, pass: false });
    // The same flat trend at a wait of 20 s (under half of the 50 s half) is judged by its rise.
    const shorter = verdictOf(
      result(
        () => 300,
        250,
        40_000,
        undefined,
        (t) => 20_000 - 20 * (t - 50),
      ),
      objective,
    );
    expect(shorter.keepsUp).toBe(true);
  });

  it("counts only the wait's rise beyond two standard errors of the fit: bursts pass, a steady climb does not", () => {
    const objective = parseObjective("p90:2000");
    // Mean TTFT by arrival rising 1,800 ms (over 3% of the 50 s half) under swings of
    // +-1,500 ms (a short window of a bursty trace) or of +-10 ms.
    const ttft = (swing: number) => (t: number) =>
      900 + swing * Math.sin(2.1 * t) + (1800 * Math.max(0, t - 50)) / 50;
    const bursty = verdictOf(
      result(() => 0, 1000, 1500, undefined, ttft(1500)),
      objective,
    );
    expect(bursty.ttftTrend.rise).toBeGreaterThan(1546);
    expect(bursty).toMatchObject({ keepsUp: true, pass: true });
    const steady = verdictOf(
      result(() => 0, 1000, 1500, undefined, ttft(10)),
      objective,
    );
    expect(steady.ttftTrend.rise).toBeCloseTo(1800, -1);
    expect(steady.keepsUp).toBe(false);
  });

  it("skips buckets without arrivals: an idle second is no wait of 0 ms", () => {
    // Every other bucket has no arrivals (its mean TTFT reads 0); the others wait 2 s steadily.
    const r = result(
      () => 0,
      1000,
      1500,
      undefined,
      () => 2000,
    );
    r.timeline.arrivals = r.timeline.arrivals.map((n, b) => (b % 2 === 0 ? n : 0));
    r.timeline.ttftByArrivalMs = r.timeline.ttftByArrivalMs.map((v, b) => (b % 2 === 0 ? v : 0));
    const v = verdictOf(r, parseObjective("p90:600000"));
    expect(v.ttftTrend).toMatchObject({ mean: 2000, rise: 0, se: 0 });
    expect(v.keepsUp).toBe(true);
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
