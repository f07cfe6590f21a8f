import { describe, expect, it } from "vitest";
import type { EngineSample } from "./engine-metrics.ts";
import { ReporterState } from "./reporter-state.ts";

const sample = (over: Partial<EngineSample> = {}): EngineSample => ({
  running: 2,
  waiting: 1,
  kvUsage: 0.5,
  kvCapacityTokens: 1000,
  lifeCounter: 10,
  prefill: null,
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

  it("measures prefill speed from the counters' differences, over spans of 0.1 s or more", () => {
    const s = new ReporterState();
    const at = (tokens: number, seconds: number, lifeCounter = 10) =>
      s.observe(ok({ prefill: { tokens, seconds }, lifeCounter }));
    expect(types(at(1000, 2))).toEqual(["capacity", "load"]);
    expect(at(2100, 4).find((e) => e.type === "prefill-rate")).toEqual({
      type: "prefill-rate",
      tokensPerSecond: 550,
      tokens: 1100,
    });
    // Idle: no prefill, no rate; a span shorter than 0.1 s waits for more.
    expect(types(at(2100, 4))).toEqual(["load"]);
    expect(types(at(2130, 4.05))).toEqual(["load"]);
    expect(at(2160, 4.2).find((e) => e.type === "prefill-rate")).toMatchObject({ tokens: 60 });
  });

  it("prefill counters going backwards mean a restart: cache-reset, and no rate across it", () => {
    const s = new ReporterState();
    s.observe(ok({ prefill: { tokens: 5000, seconds: 9 } }));
    expect(types(s.observe(ok({ prefill: { tokens: 300, seconds: 0.5 } })))).toEqual([
      "cache-reset",
      "load",
    ]);
    expect(s.observe(ok({ prefill: { tokens: 850, seconds: 1.5 } }))).toContainEqual({
      type: "prefill-rate",
      tokensPerSecond: 550,
      tokens: 550,
    });
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
