import { describe, expect, it } from "vitest";
import { parseAzure } from "./azure.ts";

const SAMPLE = `TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,1100,109
2023-11-16 18:15:50.9951690,2,7`;

describe("parseAzure", () => {
  it("reads arrivals in ms from the first row and lengths", () => {
    const trace = parseAzure(SAMPLE, "a.csv");
    expect(trace.records.map((r) => r.timestampMs)).toEqual([
      0,
      expect.closeTo(4314.579, 6),
      expect.closeTo(4314.579, 6),
    ]);
    expect(trace.records.map((r) => [r.inputTokens, r.outputTokens])).toEqual([
      [374, 44],
      [1100, 109],
      [2, 7],
    ]);
  });

  it("gives every request block ids of its own (no sharing)", () => {
    const ids = parseAzure(SAMPLE, "a.csv").records.flatMap((r) => r.blockIds);
    expect(ids).toHaveLength(1 + 3 + 1);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([
    ["a bad timestamp", "2023-11-16T18:15,1,1", /a.csv:5: bad TIMESTAMP/],
    ["a missing column", "2023-11-16 18:16:00.0,1", /a.csv:5: expected 3 columns/],
    ["a non-integer count", "2023-11-16 18:16:00.0,1.5,1", /a.csv:5: ContextTokens must be/],
    ["time going back", "2023-11-16 18:00:00.0,1,1", /a.csv:5: TIMESTAMP goes back/],
  ])("rejects %s with its line number", (_, bad, message) => {
    expect(() => parseAzure(`${SAMPLE}\n${bad}`, "a.csv")).toThrow(message);
  });

  it("rejects a file without the header", () => {
    expect(() => parseAzure("1,2,3", "a.csv")).toThrow(/a.csv:1: expected header/);
  });
});
