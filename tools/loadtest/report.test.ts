import { describe, expect, it } from "vitest";
import {
  cpuPerRequest,
  formatReport,
  type Measured,
  overhead,
  summariseLatencies,
} from "./report.ts";

const target = (name: string, rps: number, p50: number, p99: number): Measured => ({
  name,
  ok: rps * 10,
  errors: 0,
  requestsPerSecond: rps,
  latencyMs: { p50, p90: p99, p99, mean: p50, max: p99 },
});

describe("load test figures", () => {
  it("nearest-rank percentiles of 1..100 ms", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summariseLatencies(values)).toEqual({ p50: 50, p90: 90, p99: 99, mean: 50.5, max: 100 });
  });

  it("no answers: NaN, not zero", () => {
    expect(summariseLatencies([]).p50).toBeNaN();
  });

  it("overhead: routed - direct, the ratio, and the router's own cost above healthz", () => {
    const cost = overhead(
      target("direct", 10_000, 0.5, 2),
      target("routed", 500, 4.5, 20),
      target("healthz", 2_000, 1.5, 6),
    );
    expect(cost.addedMs).toEqual({ p50: 4, p99: 18 });
    expect(cost.latencyRatio).toEqual({ p50: 9, p99: 10 });
    expect(cost.ownMs).toEqual({ p50: 2.5, p99: 12 });
    expect(cost.throughputRatio).toBe(0.05);
  });

  it("prints every target and each mode's overhead rows", () => {
    const [direct, healthz, object, edge] = [
      target("direct", 10_000, 0.5, 2),
      target("healthz", 2_000, 1.5, 6),
      target("routed:object", 500, 4.5, 20),
      target("routed:edge", 1_000, 2.5, 10),
    ];
    const text = formatReport(
      [direct, healthz, object, edge],
      [object, edge].map((r) => ({ name: r.name, overhead: overhead(direct, r, healthz) })),
    );
    for (const name of ["direct", "healthz", "routed:object", "routed:edge"]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(/routed:object - direct\s+4\.00\s+18\.00/);
    expect(text).toMatch(/routed:object - direct - healthz\s+2\.50\s+12\.00\s+5\.0%/);
    expect(text).toMatch(/routed:edge - direct - healthz\s+0\.50\s+2\.00\s+10\.0%/);
  });

  it("CPU per answered request (workerd, the rest of wrangler) and each mode against the first", () => {
    const [direct, healthz, object, edge] = [
      target("direct", 10_000, 0.5, 2),
      { ...target("healthz", 2_000, 1.5, 6), cpuMs: { workerd: 40_000, node: 2_000 } },
      { ...target("routed:object", 500, 4.5, 20), cpuMs: { workerd: 30_000, node: 5_000 } },
      {
        ...target("routed:edge", 1_000, 2.5, 10),
        cpuMs: { workerd: 30_000, node: 7_000, sh: 3_000 },
      },
    ];
    const text = formatReport(
      [direct, healthz, object, edge],
      [object, edge].map((r) => ({ name: r.name, overhead: overhead(direct, r, healthz) })),
    );
    // 5,000 and 10,000 answers: 6 and 3 ms of workerd each; node and sh count as wrangler's.
    expect(text).toMatch(/routed:object\s+5000\s+500\s+4\.50\s+20\.00\s+0\s+6\.00\s+1\.00/);
    expect(text).toMatch(/routed:edge\s+10000\s+1000\s+2\.50\s+10\.00\s+0\s+3\.00\s+1\.00/);
    expect(text).toMatch(/against routed:object[^\n]*\n[^\n]*\nrouted:edge\s+2\.00x\s+2\.00x/);
  });

  it("the CPU ratio ran the other way to the req/s ratio, unlabelled: each header says its direction (issue 24)", () => {
    const object = { ...target("routed:object", 500, 4.5, 20), cpuMs: { workerd: 30_000 } };
    const edge = { ...target("routed:edge", 1_000, 2.5, 10), cpuMs: { workerd: 30_000 } };
    const direct = target("direct", 10_000, 0.5, 2);
    const text = formatReport(
      [direct, object, edge],
      [object, edge].map((r) => ({ name: r.name, overhead: overhead(direct, r, direct) })),
    );
    expect(text).toContain("req/s: mode / routed:object");
    expect(text).toContain("workerd CPU/req: routed:object / mode (>1x: mode cheaper)");
    // Without readings (not Linux) the columns stay empty rather than zero.
    expect(cpuPerRequest(direct)).toBeNull();
  });
});
