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

/** An SSE stream as the engine writes it: `event:` and `data:` lines per event. */
const events = (...list: { type: string; [field: string]: unknown }[]) =>
  list.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");

function everyCut(mode: "sse" | "json", text: string, expected: object) {
  const bytes = encoder.encode(text);
  for (let cut = 0; cut <= bytes.length; cut++) {
    expect(scan(mode, [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected);
  }
}

describe("UsageScanner: Anthropic Messages", () => {
  // llama.cpp's server, observed (tools/llama tiny model, a 1,336-token prompt sent twice).
  const llamaUsage = { cache_read_input_tokens: 1335, input_tokens: 1, output_tokens: 8 };

  it("the whole prompt is input + cache read + cache creation tokens; cached is the read", () => {
    const answer = { id: "msg_1", type: "message", content: [], usage: llamaUsage };
    everyCut("json", JSON.stringify(answer), { promptTokens: 1336, cachedTokens: 1335 });
    const anthropic = {
      type: "message",
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 2000,
        cache_creation_input_tokens: 500,
        output_tokens: 3,
      },
    };
    expect(scan("json", [encoder.encode(JSON.stringify(anthropic))])).toEqual({
      promptTokens: 2510,
      cachedTokens: 2000,
    });
  });

  it("streamed: message_start's usage is kept when message_delta carries only output tokens", () => {
    const stream = events(
      { type: "message_start", message: { id: "m", usage: { ...llamaUsage, output_tokens: 0 } } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "usage" } },
      { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 8 } },
      { type: "message_stop" },
    );
    everyCut("sse", stream, { promptTokens: 1336, cachedTokens: 1335 });
  });

  it("streamed: message_delta's cumulative input counts update message_start's", () => {
    const stream = events(
      { type: "message_start", message: { usage: { input_tokens: 50, output_tokens: 1 } } },
      {
        type: "message_delta",
        usage: { input_tokens: 40, cache_read_input_tokens: 10, output_tokens: 9 },
      },
    );
    expect(scan("sse", [encoder.encode(stream)])).toEqual({ promptTokens: 50, cachedTokens: 10 });
  });

  it("no cache fields: input_tokens is the whole prompt and nothing cached is claimed", () => {
    const answer = { type: "message", usage: { input_tokens: 12, output_tokens: 1 } };
    expect(scan("json", [encoder.encode(JSON.stringify(answer))])).toEqual({ promptTokens: 12 });
  });
});

describe("UsageScanner: OpenAI Responses", () => {
  // llama.cpp's server, observed.
  const usage = {
    input_tokens: 1336,
    output_tokens: 8,
    total_tokens: 1344,
    input_tokens_details: { cached_tokens: 1335 },
  };
  const expected = { promptTokens: 1336, cachedTokens: 1335, responseId: "resp_abc" };

  it("unstreamed: input_tokens is the whole prompt, cached_tokens its cached part, and the id", () => {
    const answer = { id: "resp_abc", object: "response", status: "completed", output: [], usage };
    everyCut("json", JSON.stringify(answer), expected);
  });

  it("streamed: the id from response.created, the usage from response.completed", () => {
    const response = { id: "resp_abc", object: "response" };
    const stream = events(
      { type: "response.created", response: { ...response, status: "in_progress" } },
      { type: "response.output_text.delta", item_id: "msg_1", delta: '"usage"' },
      { type: "response.completed", response: { ...response, status: "completed", usage } },
    );
    everyCut("sse", stream, expected);
  });

  it("a stream cut before response.completed still names the response", () => {
    const stream = events({
      type: "response.created",
      response: { id: "resp_abc", object: "response", status: "in_progress" },
    });
    expect(scan("sse", [encoder.encode(stream)])).toEqual({ responseId: "resp_abc" });
  });

  it("a chat answer's id is not a response id", () => {
    const answer = { id: "chatcmpl-1", object: "chat.completion", usage: { prompt_tokens: 5 } };
    expect(scan("json", [encoder.encode(JSON.stringify(answer))])).toEqual({ promptTokens: 5 });
  });
});
