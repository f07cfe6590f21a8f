import { describe, expect, it } from "vitest";
import type { RequestReport } from "../request-record/request-report.ts";
import { addUsage, usageSums } from "./usage-sums.ts";

const report = (usage: Partial<RequestReport>): RequestReport => ({
  origin: "a",
  outcome: "ok",
  failures: [],
  matchedTokens: 0,
  objectMs: null,
  fallback: null,
  ...usage,
});

describe("usage sums", () => {
  it("adds the engine's tokens of requests that reported prompt and cached tokens", () => {
    const sums = usageSums();
    addUsage(sums, report({ promptTokens: 100, cachedTokens: 60, matchedTokens: 64 }));
    addUsage(sums, report({ promptTokens: 50, cachedTokens: 0, matchedTokens: 0 }));
    expect(sums).toEqual({
      usageReports: 2,
      promptTokens: 150,
      cachedTokens: 60,
      matchedTokens: 64,
    });
  });

  it("skips a request without usage, or with half of it", () => {
    const sums = usageSums();
    addUsage(sums, report({ matchedTokens: 64 }));
    addUsage(sums, report({ cachedTokens: 10, matchedTokens: 64 }));
    addUsage(sums, report({ promptTokens: 10, matchedTokens: 64 }));
    expect(sums).toEqual(usageSums());
  });

  it("counts a prediction up to the engine's prompt, so predicted and cached share a scale", () => {
    const sums = usageSums();
    addUsage(sums, report({ promptTokens: 40, cachedTokens: 32, matchedTokens: 64 }));
    expect(sums.matchedTokens).toBe(40);
  });
});
