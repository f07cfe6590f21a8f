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
  it("sends capacity once, then load on every scrape", () => {
    const s = new ReporterState();
    expect(s.observe(ok())).toEqual([
      { type: "capacity", kvCapacityTokens: 1000 },
      { type: "load", running: 2, waiting: 1, kvUsage: 0.5 },
    ]);
    expect(types(s.observe(ok({ lifeCounter: 20 })))).toEqual(["load"]);
    expect(types(s.observe(ok({ kvCapacityTokens: 2000, lifeCounter: 30 })))).toEqual([
      "capacity",
      "load",
    ]);
  });

  it("a counter going backwards means a restart: cache-reset", () => {
    const s = new ReporterState();
    s.observe(ok({ lifeCounter: 500 }));
    expect(types(s.observe(ok({ lifeCounter: 3 })))).toEqual(["cache-reset", "load"]);
  });

  it("one failed scrape is not a restart", () => {
    const s = new ReporterState();
    s.observe(ok({ lifeCounter: 5 }));
    expect(s.observe({ ok: false })).toEqual([]);
    expect(types(s.observe(ok({ lifeCounter: 6 })))).toEqual(["load"]);
  });

  it("down after three failures; back up with an empty cache", () => {
    const s = new ReporterState(3);
    s.observe(ok());
    expect(s.observe({ ok: false })).toEqual([]);
    expect(s.observe({ ok: false })).toEqual([]);
    expect(s.observe({ ok: false })).toEqual([{ type: "health", status: "down" }]);
    expect(s.observe({ ok: false })).toEqual([]);
    expect(types(s.observe(ok({ lifeCounter: 1 })))).toEqual(["cache-reset", "health", "load"]);
  });
});
