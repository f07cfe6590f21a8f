import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { assignIsolates, usersOf } from "../../../sim/edge/sessions.ts";
import { Topology } from "../../../sim/edge/topology.ts";
import { withSeed, workloadOf } from "../../../sim/fleet/runner.ts";
import { hashesOf } from "../../../sim/workload/workload.ts";
import { parseCli, UsageError } from "../args.ts";
import { parseEdgeCli } from "./edge-args.ts";
import { type EdgeSpec, runPair } from "./edge-pair.ts";
import { promptHashes, runRate } from "./edge-rate.ts";
import { formatRatio, meanInterval, ratioStats } from "./paired-stats.ts";

const base = parseCli(["--format", "synthetic:sessions", "--limit", "300", "--policies", "cost"]);

function spec(overrides: Partial<EdgeSpec> = {}): EdgeSpec {
  return {
    bench: base.spec,
    policy: "cost",
    topology: { isolates: 4, colos: 2, coordinators: 1, rttNearMs: 2, rttFarMs: 100 },
    stickiness: { colo: 0.9, isolate: 0 },
    edge: {},
    outage: null,
    sampleEvery: 4,
    objectRtt: true,
    ...overrides,
  };
}

describe("paired statistics", () => {
  it("gives Student's t interval of the mean", () => {
    // mean 2, sample sd 1, t(0.975, 2) = 4.303: half-width 4.303 / sqrt(3).
    const s = meanInterval([1, 2, 3]);
    expect(s.mean).toBe(2);
    expect(s.hi - s.mean).toBeCloseTo(4.303 / Math.sqrt(3), 3);
    expect(s.mean - s.lo).toBeCloseTo(4.303 / Math.sqrt(3), 3);
  });

  it("takes the ratio per seed, skipping seeds whose synchronous figure is 0", () => {
    const s = ratioStats([1, 3, 5], [2, 0, 5]);
    expect(s.n).toBe(2);
    expect(s.mean).toBe(0.75);
  });

  it("printed negative bounds for ratios with 2 seeds: no CI under 3 seeds, and never below 0 (issue 24)", () => {
    const two = ratioStats([0.5, 1.5], [1, 1]);
    expect(two.lo).toBe(0);
    expect(formatRatio(two)).toBe("1.000 (0.500-1.500, 2 seeds, no CI)");
    expect(formatRatio(ratioStats([1.02], [1]))).toBe("1.020 (1 seed, no CI)");
    const three = ratioStats([0.2, 1, 3], [1, 1, 1]);
    expect(meanInterval([0.2, 1, 3]).lo).toBeLessThan(0);
    expect(formatRatio(three)).toMatch(/^1\.400 \[0\.000, \d+\.\d{3}\]$/);
    expect(formatRatio(ratioStats([], []))).toBe("n/a");
  });
});

describe("topology and sessions", () => {
  it("puts colos on a ring: near within a colo, the antipode farthest, groups contiguous", () => {
    const t = new Topology({ isolates: 8, colos: 4, coordinators: 2, rttNearMs: 2, rttFarMs: 150 });
    expect(t.rttMs(1, 1)).toBe(2);
    expect(t.rttMs(0, 2)).toBe(152);
    expect(t.rttMs(0, 3)).toBe(t.rttMs(0, 1));
    expect([...t.groupOf]).toEqual([0, 0, 1, 1]);
    expect(t.isolatesIn.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("keeps a user in its home colo with probability 1, whatever the isolate", () => {
    const w = workloadOf(base.spec);
    const t = new Topology({ isolates: 8, colos: 4, coordinators: 1, rttNearMs: 2, rttFarMs: 150 });
    const isolates = assignIsolates(w, t, { colo: 1, isolate: 0 }, 7);
    const users = usersOf(w);
    const coloOfUser = new Map<number, number>();
    for (let i = 0; i < w.size; i++) {
      const colo = t.coloOf[isolates[i] as number] as number;
      const seen = coloOfUser.get(users[i] as number);
      if (seen !== undefined) expect(colo).toBe(seen);
      coloOfUser.set(users[i] as number, colo);
    }
    // Sessions have several turns each: fewer users than requests.
    expect(coloOfUser.size).toBeLessThan(w.size);
  });
});

describe("bench:edge options", () => {
  it("takes its own options and passes the rest to bench's, with cost as the policy", () => {
    const o = parseEdgeCli(["--isolates", "8", "--limit", "100", "--sweep", "colos=1,4"]);
    expect(o.isolates).toBe(8);
    expect(o.base.spec.limit).toBe(100);
    expect(o.base.policies).toEqual(["cost"]);
    expect(o.sweep).toEqual({ name: "colos", values: [1, 4] });
    expect(o.objectRtt).toBe(true);
  });

  it("--help prints bench:edge's usage and exits 0 (it printed a stack trace)", () => {
    const cli = fileURLToPath(new URL("../edge.ts", import.meta.url));
    const run = spawnSync(process.execPath, [cli, "--help"], { encoding: "utf8" });
    expect(run.stdout).toMatch(/^usage: npm run bench:edge/);
    expect(run.stdout).toContain("--isolates N");
    expect(run.status).toBe(0);
  });

  it("names the bad option", () => {
    expect(() => parseEdgeCli(["--isolates", "0"])).toThrow(/--isolates/);
    expect(() => parseEdgeCli(["--sweep", "speed=1"])).toThrow(UsageError);
    expect(() => parseEdgeCli(["--policies", "cost,random"])).toThrow(/one policy/);
  });
});

describe("edge replay", () => {
  it("pairs both modes on the same requests; an outage fails none, and a seed replays exactly", () => {
    const s = spec({ outage: { at: 0.3, durationMs: 20_000 } });
    const w = workloadOf(withSeed(s.bench, 3));
    const a = runPair(s, 3, w);
    expect(a.edge.requests).toBe(a.sync.requests);
    expect(a.edge.failed).toBe(0);
    expect(a.outage?.edgeFailed).toBe(0);
    expect(a.outage?.edgeDegradedDecisions).toBeGreaterThan(0);
    expect(a.edge.edge.syncsPerRequest).toBeGreaterThan(0);
    expect(a.edge.edge.viewAgeMs.max).toBeGreaterThan(0);
    // Byte sizes included: V8's own count once varied with the JIT's history (sim/edge/wire-size.ts).
    expect(JSON.stringify(runPair(s, 3, w))).toBe(JSON.stringify(a));
  }, 60_000);

  it("a cold or idle isolate's request waits for one sync, as the Worker's does, and its TTFT counts the wait", () => {
    // warmMs 1 s: isolates stop syncing between their requests, so views go past 5 s old.
    const s = spec({ edge: { ...spec().edge, warmMs: 1000 } });
    const w = workloadOf(withSeed(s.bench, 3));
    const a = runPair(s, 3, w);
    const e = a.edge.edge;
    expect(e.coldDecisions).toBe(0);
    expect(e.waitedDecisions).toBeGreaterThanOrEqual(s.topology.isolates);
    // Every decision after a wait is made on a fresh view.
    expect(e.viewAgeMs.max).toBeLessThan(5000);
    expect(a.edge.requests).toBe(a.sync.requests);
  }, 60_000);

  it("push: the same arrivals bill fewer object requests and route on younger views than sync calls, failing none", () => {
    const w = workloadOf(withSeed(spec().bench, 3));
    const pushed = runPair(spec({ edge: { push: true } }), 3, w);
    const polled = runPair(spec({ edge: { push: false } }), 3, w);
    expect(pushed.edge.failed).toBe(0);
    expect(pushed.edge.requests).toBe(polled.edge.requests);
    expect(pushed.edge.edge.callsPerRequest).toBeLessThan(polled.edge.edge.callsPerRequest / 4);
    expect(pushed.edge.edge.viewAgeMs.p50).toBeLessThan(polled.edge.edge.viewAgeMs.p50);
  }, 60_000);

  it("at a higher pool rate, the same isolates make fewer calls per request", () => {
    const s = spec({ topology: { ...spec().topology, isolates: 8 } });
    const w = workloadOf(s.bench);
    const slow = runRate(s, { rateRps: 200, seconds: 4, holdMs: 1000 }, w, 1);
    const fast = runRate(s, { rateRps: 2000, seconds: 4, holdMs: 1000 }, w, 1);
    expect(fast.warmCallsPerRequest).toBeLessThan(slow.warmCallsPerRequest / 4);
    // A warm replica syncs at most once per flush interval (100 ms) while nothing fills a batch.
    expect(fast.warmPeakSyncsPerSecond).toBeLessThanOrEqual(8 * 10 + 8);
    // The requests carry TTFT and canonical bytes: the coordinators' learners run.
    expect(fast.learned.bytesPerToken.samples).toBeGreaterThan(0);
    expect(fast.learned.bytesPerToken.bytesPerToken).toBeCloseTo(4, 1);
    for (const samples of fast.learned.prefillSamples) expect(samples).toBeGreaterThan(0);
  }, 60_000);

  it("defect I: the rate probe's window holds end records and fresh prompts, not a trace's repeats", () => {
    const s = spec();
    const w = workloadOf(s.bench);
    // The CLI's 5 s holds; seven passes over the 300-request workload.
    const r = runRate(s, { rateRps: 200, seconds: 4, holdMs: 5000 }, w, 1);
    expect(r.passes).toBeGreaterThanOrEqual(7);
    // Every request arriving in the window is matched by one ending in it: route and end records.
    expect(r.warmEndsPerRequest).toBeGreaterThan(0.95);
    expect(r.warmRecordsPerRequest).toBeGreaterThan(1.9);
    // Each pass brings new prompts to claim: the index holds several passes' chunks, not one's.
    const once = runRate(s, { rateRps: 40, seconds: 1, holdMs: 5000 }, w, 1);
    expect(once.passes).toBe(1);
    expect(r.coordinatorChunks).toBeGreaterThan(5 * once.coordinatorChunks);
  }, 60_000);

  it("re-keys a replayed prompt: the same sharing within a pass, none across passes", () => {
    const w = workloadOf(spec().bench);
    const a = promptHashes(w, 0);
    expect(promptHashes(w, w.size)).toHaveLength(a.length);
    const again = new Set(promptHashes(w, w.size));
    expect(Array.from(a).some((h) => again.has(h))).toBe(false);
    // Two prompts sharing a first chunk in pass 0 share it in pass 2 too.
    const first = a[0] as number;
    const j = Array.from({ length: w.size }, (_, k) => k).find(
      (k) => k > 0 && hashesOf(w, k)[0] === first,
    );
    expect(j).toBeDefined();
    expect(promptHashes(w, 2 * w.size + (j as number))[0]).toBe(promptHashes(w, 2 * w.size)[0]);
    expect(promptHashes(w, 2 * w.size)[0]).not.toBe(first);
  });
});
