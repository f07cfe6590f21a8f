import { describe, expect, it } from "vitest";
import { parseMooncake } from "./mooncake.ts";
import { TraceFormatError } from "./trace.ts";

const SAMPLE = [
  '{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}',
  '{"timestamp": 0, "input_length": 700, "output_length": 490, "hash_ids": [0, 14]}',
  "",
  '{"timestamp": 3000, "input_length": 512, "output_length": 1, "hash_ids": [0]}',
].join("\n");

function lineOf(text: string): number {
  try {
    parseMooncake(text, "t.jsonl");
  } catch (error) {
    if (error instanceof TraceFormatError) return error.line;
    throw error;
  }
  return 0;
}

describe("parseMooncake", () => {
  it("reads records with 512-token blocks", () => {
    const trace = parseMooncake(SAMPLE, "t.jsonl");
    expect(trace.blockTokens).toBe(512);
    expect(trace.records).toHaveLength(3);
    expect(trace.records[1]).toEqual({
      timestampMs: 0,
      inputTokens: 700,
      outputTokens: 490,
      blockIds: [0, 14],
    });
    expect(trace.records[2]?.timestampMs).toBe(3000);
  });

  it.each([
    ["not JSON", "{oops"],
    ["a missing field", '{"timestamp": 0, "input_length": 10, "hash_ids": [0]}'],
    [
      "a negative length",
      '{"timestamp": 0, "input_length": -1, "output_length": 1, "hash_ids": []}',
    ],
    [
      "a wrong id count",
      '{"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [0, 1]}',
    ],
    [
      "a non-integer id",
      '{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": ["a"]}',
    ],
    ["an array", "[1, 2]"],
  ])("rejects %s with its line number", (_, bad) => {
    expect(lineOf(`${SAMPLE}\n${bad}\n`)).toBe(5);
  });

  it("rejects a timestamp that goes back in time", () => {
    const back = '{"timestamp": 10, "input_length": 10, "output_length": 1, "hash_ids": [0]}';
    expect(() => parseMooncake(`${SAMPLE}\n${back}`, "t.jsonl")).toThrow(
      /t.jsonl:5: .*back in time/,
    );
  });
});
