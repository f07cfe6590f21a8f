import { describe, expect, it } from "vitest";
import type { EngineSample } from "./engine-metrics.ts";
import { ReporterState } from "./reporter-state.ts";

const sample = (over: Partial<EngineSample> = {}): EngineSample => ({
  running: 2,
  waiting: 1,
  kvUsage: 0.5,
  kvCapacityTokens: 1000,
  lifeCounter: 10,
  ...over,
});
const ok = (over: Partial<EngineSample> = {}) => ({ ok: true as const, sample: sample(over) });
const types = (events: { type: string }[]) => events.map((e) => e.type);

describe("ReporterState", () => {
  it("states health and capacity in every batch, then the load", () => {
    const s = new ReporterState();
    expect(s.observe(ok())).toEqual([
      { type: "health", status: "up" },
      { type: "capacity", kvCapacityTokens: 1000 },
      { type: "load", running: 2, waiting: 1, kvUsage: 0.5 },
    ]);
    expect(s.observe(ok({ lifeCounter: 20 }))).toEqual([
      { type: "health", status: "up" },
      { type: "capacity", kvCapacityTokens: 1000 },
      { type: "load", running: 2, waiting: 1, kvUsage: 0.5 },
    ]);
    expect(s.observe(ok({ kvCapacityTokens: 2000, lifeCounter: 30 }))[1]).toEqual({
      type: "capacity",
      kvCapacityTokens: 2000,
    });
    // A scrape without a capacity states the last one known; none known, none stated.
    expect(types(s.observe(ok({ kvCapacityTokens: null, lifeCounter: 40 })))).toEqual([
      "health",
      "capacity",
      "load",
    ]);
    expect(types(new ReporterState().observe(ok({ kvCapacityTokens: null })))).toEqual([
      "health",
      "load",
    ]);
  });

  it("a counter going backwards means a restart: cache-reset", () => {
    const s = new ReporterState();
    s.observe(ok({ lifeCounter: 500 }));
    expect(types(s.observe(ok({ lifeCounter: 3 })))).toEqual([
      "cache-reset",
      "health",
      "capacity",
      "load",
    ]);
  });

  it("one failed scrape is not a restart", () => {
    const s = new ReporterState();
    s.observe(ok({ lifeCounter: 5 }));
    expect(s.observe({ ok: false })).toEqual([]);
    expect(types(s.observe(ok({ lifeCounter: 6 })))).toEqual(["health", "capacity", "load"]);
  });

  it("down after three failures, said again at every failure after (issue 24); back up with an empty cache", () => {
    // A router that restarted while the engine was down must hear `down` again: once on change
    // was all it used to get, and it came back believing the origin up.
    const down = [{ type: "health", status: "down" }];
    const s = new ReporterState(3);
    s.observe(ok());
    expect(s.observe({ ok: false })).toEqual([]);
    expect(s.observe({ ok: false })).toEqual([]);
    expect(s.observe({ ok: false })).toEqual(down);
    expect(s.observe({ ok: false })).toEqual(down);
    expect(s.observe({ ok: false })).toEqual(down);
    expect(types(s.observe(ok({ lifeCounter: 1 })))).toEqual([
      "cache-reset",
      "health",
      "capacity",
      "load",
    ]);
  });
});
