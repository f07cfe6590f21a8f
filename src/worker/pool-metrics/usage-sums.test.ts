import { describe, expect, it } from "vitest";
import type { RequestReport } from "../request-record/request-report.ts";
import { addUsage, cacheUsage, usageSums } from "./usage-sums.ts";

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

  it("takes a disaggregated request's cache hit from its prefill leg, for the prefill origin", () => {
    // vLLM's decode engine reports every prompt token but the last as cached: not a cache hit.
    const disaggregated = report({
      promptTokens: 100,
      cachedTokens: 99,
      matchedTokens: 100,
      prefill: { origin: "p", matchedTokens: 32, usage: { promptTokens: 100, cachedTokens: 40 } },
    });
    expect(cacheUsage(disaggregated)).toEqual({
      origin: "p",
      matchedTokens: 32,
      promptTokens: 100,
      cachedTokens: 40,
    });
    // llm-d's sidecar answers no prefill usage: the request has none to count.
    const sidecar = report({
      promptTokens: 100,
      cachedTokens: 99,
      prefill: { origin: "p", matchedTokens: 0 },
    });
    const sums = usageSums();
    addUsage(sums, cacheUsage(sidecar));
    expect(sums).toEqual(usageSums());
  });
});
