import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anthropicSseErrorEnding, EventBoundary, sseErrorEnding } from "./sse-ending.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Reference: the SSE grammar's line terminators (CRLF taken whole, else LF or CR) read from the
 * start of `text`; a boundary is where the last two tokens are both terminators.
 */
function endsWithBlankLine(text: string): boolean {
  if (text === "") return true;
  const tokens: ("eol" | "char")[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\r" && text[i + 1] === "\n") i++;
    tokens.push(text[i] === "\r" || text[i] === "\n" ? "eol" : "char");
  }
  return tokens.length >= 2 && tokens.at(-1) === "eol" && tokens.at(-2) === "eol";
}

/** Events as a client's SSE parser dispatches them: the data of each, in order. */
function dispatched(text: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line === "") {
      if (data.length > 0) out.push(data.join("\n"));
      data = [];
    } else if (line.startsWith("data: ")) {
      data.push(line.slice(6));
    }
  }
  return out;
}

describe("EventBoundary", () => {
  it("is at a boundary exactly where the bytes so far end with a blank line, however split", () => {
    const text = fc.stringMatching(/^[ad: {}\r\n]{0,40}$/);
    fc.assert(
      fc.property(text, fc.array(fc.nat(40), { maxLength: 6 }), (s, cuts) => {
        const bytes = encoder.encode(s);
        const points = [...new Set([0, ...cuts.map((c) => c % (bytes.length + 1)), bytes.length])];
        points.sort((a, b) => a - b);
        const boundary = new EventBoundary();
        for (let i = 1; i < points.length; i++) {
          boundary.push(bytes.subarray(points[i - 1], points[i]));
          const prefix = decoder.decode(bytes.subarray(0, points[i]));
          expect(boundary.atBoundary, JSON.stringify(prefix)).toBe(endsWithBlankLine(prefix));
        }
      }),
    );
  });
});

describe("sseErrorEnding", () => {
  const error = { message: "m", type: "server_error", code: "stream_idle_timeout", param: null };

  it("after whole events: vLLM's ending, an error event then [DONE]", () => {
    const stream = `data: {"id":1}\n\n${decoder.decode(sseErrorEnding(error.code, "m", true))}`;
    expect(dispatched(stream)).toEqual(['{"id":1}', JSON.stringify({ error }), "[DONE]"]);
  });

  it("after half an event: the half is ended first, never glued to the error", () => {
    const half = 'data: {"id":1}\n\ndata: {"id":';
    for (const cut of [half, `${half}\r`, `${half}\n`, `${half}\r\n`]) {
      const stream = cut + decoder.decode(sseErrorEnding(error.code, "m", false));
      expect(dispatched(stream)).toEqual([
        '{"id":1}',
        '{"id":',
        JSON.stringify({ error }),
        "[DONE]",
      ]);
    }
  });
});

describe("anthropicSseErrorEnding", () => {
  const error = { type: "error", error: { type: "api_error", message: "m" } };

  it("one `event: error` in Anthropic's shape, no [DONE]; after half an event, the half ended first", () => {
    const whole = `event: ping\ndata: {}\n\n${decoder.decode(anthropicSseErrorEnding("m", true))}`;
    expect(whole.endsWith(`event: error\ndata: ${JSON.stringify(error)}\n\n`)).toBe(true);
    expect(dispatched(whole)).toEqual(["{}", JSON.stringify(error)]);
    const cut = `event: ping\ndata: {"a":`;
    const ended = cut + decoder.decode(anthropicSseErrorEnding("m", false));
    expect(dispatched(ended)).toEqual(['{"a":', JSON.stringify(error)]);
  });
});
