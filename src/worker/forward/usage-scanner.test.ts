import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS, scanModeOf, UsageScanner } from "./usage-scanner.ts";

const encoder = new TextEncoder();
const usage = {
  prompt_tokens: 1200,
  completion_tokens: 5,
  prompt_tokens_details: { cached_tokens: 1024 },
};
const sse = [
  `data: ${JSON.stringify({ choices: [{ delta: { content: "héllo €" } }], usage: null })}\n\n`,
  `data: ${JSON.stringify({ choices: [], usage })}\r\n\r\n`,
  "data: [DONE]\n\n",
].join("");

function scan(mode: "sse" | "json", parts: Uint8Array[]) {
  const scanner = new UsageScanner(mode);
  for (const part of parts) scanner.push(part);
  return scanner.finish();
}

describe("UsageScanner", () => {
  it("finds the final usage in SSE however the bytes are split", () => {
    const bytes = encoder.encode(sse);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(scan("sse", [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual({
        promptTokens: 1200,
        cachedTokens: 1024,
      });
    }
  });

  it("keeps the last usage when every chunk carries one, and a last line without newline", () => {
    const early = `data: ${JSON.stringify({ usage: { prompt_tokens: 1 } })}\n\n`;
    const last = `data: ${JSON.stringify({ usage: { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: 4 } } })}`;
    expect(scan("sse", [encoder.encode(early + last)])).toEqual({
      promptTokens: 9,
      cachedTokens: 4,
    });
  });

  it("reports no cached tokens when the engine reports none", () => {
    const line = `data: ${JSON.stringify({ usage: { prompt_tokens: 7, prompt_tokens_details: null } })}\n\n`;
    expect(scan("sse", [encoder.encode(line)])).toEqual({ promptTokens: 7 });
  });

  it("skips an over-long line without losing the lines after it", () => {
    const huge = `data: {"x":"${"a".repeat(MAX_LINE_CHARS + 10)}"}\n\n`;
    const line = `data: ${JSON.stringify({ usage: { prompt_tokens: 3 } })}\n\n`;
    const bytes = encoder.encode(huge + line);
    const parts = [];
    for (let at = 0; at < bytes.length; at += 65536) parts.push(bytes.subarray(at, at + 65536));
    expect(scan("sse", parts)).toEqual({ promptTokens: 3 });
  });

  it("reads usage from a JSON body split anywhere", () => {
    const bytes = encoder.encode(JSON.stringify({ id: "x", choices: [{ text: "€" }], usage }));
    for (let cut = 0; cut <= bytes.length; cut += 7) {
      expect(scan("json", [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual({
        promptTokens: 1200,
        cachedTokens: 1024,
      });
    }
  });

  it("finds nothing in a body that is not JSON or has no usage", () => {
    expect(scan("json", [encoder.encode("<html>")])).toEqual({});
    expect(scan("sse", [encoder.encode('event: ping\ndata: {"usage": oops}\n\n')])).toEqual({});
  });

  it("chooses the mode from the content type", () => {
    expect(scanModeOf("text/event-stream; charset=utf-8")).toBe("sse");
    expect(scanModeOf("application/json")).toBe("json");
    expect(scanModeOf("text/plain")).toBe("none");
    expect(scanModeOf(null)).toBe("none");
  });
});
