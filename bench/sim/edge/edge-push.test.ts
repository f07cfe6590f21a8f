/**
 * Edge push in the simulator (sim/edge/push-model.ts): the core's frames, uploads and the
 * `sync` fallback on the replay's clock, and the bill they run up beside polling.
 */
import { describe, expect, it } from "vitest";
import { withSeed, workloadOf } from "../../../sim/fleet/runner.ts";
import { FRAME_TICK_MS } from "../../../src/core/edge/push-timing.ts";
import { parseCli } from "../args.ts";
import { type EdgeSpec, runPair } from "./edge-pair.ts";

const base = parseCli(["--format", "synthetic:sessions", "--limit", "300", "--policies", "cost"]);

function spec(isolates: number, push: boolean, overrides: Partial<EdgeSpec> = {}): EdgeSpec {
  return {
    bench: base.spec,
    policy: "cost",
    topology: { isolates, colos: 2, coordinators: 1, rttNearMs: 2, rttFarMs: 100 },
    stickiness: { colo: 0.9, isolate: 0 },
    edge: { push },
    outage: null,
    sampleEvery: 4,
    objectRtt: true,
    ...overrides,
  };
}

const w = workloadOf(withSeed(base.spec, 3));
const span = w.arrivalMs[w.size - 1] as number;

describe("edge push in the simulator", () => {
  it("ran every isolate on polling whatever edge.push said: push sends batches up sockets and frames down, and syncs only to start", () => {
    const push = runPair(spec(8, true), 3, w).edge.edge;
    const poll = runPair(spec(8, false), 3, w).edge.edge;
    expect(poll.bill.uploads).toBe(0);
    expect(poll.bill.framesBuilt).toBe(0);
    expect(push.protocol.uploads).toBeGreaterThan(w.size / 8);
    expect(push.protocol.frames).toBeGreaterThan(0);
    expect(push.protocol.gaps).toBe(0);
    // Cold starts (one bootstrap each) and little else; polling syncs every flushMs while warm.
    expect(push.syncsPerRequest).toBeLessThan(poll.syncsPerRequest / 5);
    expect(push.viewAgeMs.p99).toBeLessThan(poll.viewAgeMs.p99);
    expect(push.callsPerRequest).toBeLessThan(poll.callsPerRequest);
  }, 60_000);

  it("builds one frame per tick whatever the isolate count, and every socket gets it", () => {
    for (const isolates of [2, 16]) {
      const e = runPair(spec(isolates, true), 3, w).edge.edge;
      expect(e.bill.framesBuilt).toBe(e.protocol["coordinator.frames"]);
      // At most one frame per tick over the replay (and its tail), never one per isolate.
      expect(e.bill.framesBuilt).toBeLessThanOrEqual((span + 120_000) / FRAME_TICK_MS);
      expect(e.bill.framesDelivered).toBeGreaterThan(
        e.bill.framesBuilt * Math.min(2, isolates - 1),
      );
    }
  }, 60_000);

  it("bills a connect and a sync as one request, a message up a socket as 1/20, frames down as nothing", () => {
    const pair = runPair(spec(8, true), 3, w);
    const e = pair.edge.edge;
    const syncs = e.protocol["coordinator.syncs"] as number;
    // Root exchanges: the sum less the rest (one each, webhooks excluded as in object mode).
    const rest = syncs + e.bill.connects + e.bill.uploads / 20;
    expect(e.callsPerRequest * w.size).toBeGreaterThan(rest - 1);
    expect(e.bill.connects).toBeGreaterThan(0);
    // Far below a request per frame delivered: frames are free.
    expect(e.callsPerRequest * w.size).toBeLessThan(e.bill.framesDelivered / 10);
  }, 60_000);

  it("a closed socket falls back to sync: an outage closes every socket, replicas sync (and fail: degraded), no request fails", () => {
    const pair = runPair(spec(8, true, { outage: { at: 0.3, durationMs: 20_000 } }), 3, w);
    expect(pair.outage?.edgeFailed).toBe(0);
    expect(pair.outage?.edgeDegradedDecisions).toBeGreaterThan(0);
    expect(pair.edge.failed).toBe(0);
  }, 60_000);
});
