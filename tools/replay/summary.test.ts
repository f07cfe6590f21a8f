import { describe, expect, it } from "vitest";
import { quantile } from "../../sim/report/stats.ts";
import type { ReplayResult } from "./replay.ts";
import { formatSummaries, summarise } from "./summary.ts";

function result(ttftMs: number | null, ok = true): ReplayResult {
  return {
    ok,
    origin: ok ? "gpu-a" : null,
    reason: null,
    ttftMs,
    promptTokens: 100,
    cachedTokens: 40,
    completionTokens: 8,
  };
}

describe("npm start's summary", () => {
  it("p99 in npm start is the benchmark's p99: nearest rank, not one sample higher", () => {
    const ttfts = Array.from({ length: 200 }, (_, i) => (i * 37) % 200);
    const s = summarise(
      "cost",
      ttfts.map((t) => result(t)),
      ["gpu-a"],
    );
    const sorted = Float64Array.from(ttfts).sort();
    expect(s.ttftP50Ms).toBe(quantile(sorted, 0.5));
    expect(s.ttftP99Ms).toBe(quantile(sorted, 0.99));
    expect([s.ttftP50Ms, s.ttftP99Ms]).toEqual([99, 197]);
  });

  it("counts only successful requests with a first token, and shows - when there is none", () => {
    const s = summarise("cost", [result(null, false), result(null)], ["gpu-a", "gpu-b"]);
    expect(s).toMatchObject({ requests: 2, failed: 1, cachedRatio: 0.4 });
    expect(s.perOrigin).toEqual({ "gpu-a": 1, "gpu-b": 0 });
    const [, , row] = formatSummaries([s]).split("\n");
    expect(row?.split(/\s+/)).toEqual(["cost", "2", "1", "40.0%", "-", "-", "1", "0"]);
  });
});
