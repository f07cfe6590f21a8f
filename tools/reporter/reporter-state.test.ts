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

  it("measures prefill speed from the counters' differences, over spans of 0.1 s or more", () => {
    const s = new ReporterState();
    const at = (tokens: number, seconds: number, lifeCounter = 10) =>
      s.observe(ok({ prefill: { tokens, seconds }, lifeCounter }));
    expect(types(at(1000, 2))).toEqual(["health", "capacity", "load"]);
    expect(at(2100, 4).find((e) => e.type === "prefill-rate")).toEqual({
      type: "prefill-rate",
      tokensPerSecond: 550,
      tokens: 1100,
    });
    // Idle: no prefill, no rate; a span shorter than 0.1 s waits for more.
    expect(types(at(2100, 4))).toEqual(["health", "capacity", "load"]);
    expect(types(at(2130, 4.05))).toEqual(["health", "capacity", "load"]);
    expect(at(2160, 4.2).find((e) => e.type === "prefill-rate")).toMatchObject({ tokens: 60 });
  });

  it("prefill counters going backwards mean a restart: cache-reset, and no rate across it", () => {
    const s = new ReporterState();
    s.observe(ok({ prefill: { tokens: 5000, seconds: 9 } }));
    expect(types(s.observe(ok({ prefill: { tokens: 300, seconds: 0.5 } })))).toEqual([
      "cache-reset",
      "health",
      "capacity",
      "load",
    ]);
    expect(s.observe(ok({ prefill: { tokens: 850, seconds: 1.5 } }))).toContainEqual({
      type: "prefill-rate",
      tokensPerSecond: 550,
      tokens: 550,
    });
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
