import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalPrompt } from "./canonical-prompt.ts";
import { canonicalText, promptKey } from "./prompt-key.ts";

const text = (body: unknown) => canonicalText(body, "responses");
const input = (...items: unknown[]) => ({ model: "m", input: items });
const [STX, ETX, GS, RS, US, SUB] = ["\u0002", "\u0003", "\u001d", "\u001e", "\u001f", "\u001a"];

describe("Responses canonical prompt: each item and part", () => {
  it("a string input is one user message; instructions a system message, as in chat", () => {
    const expected = `${STX}system${RS}be brief${ETX}${STX}user${RS}hi${ETX}`;
    expect(text({ model: "m", instructions: "be brief", input: "hi" })).toBe(expected);
    const items = [{ role: "user", content: [{ type: "input_text", text: "hi" }] }];
    expect(text({ model: "m", instructions: "be brief", input: items })).toBe(expected);
    const chat = {
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
      ],
    };
    expect(canonicalPrompt(chat)).toBe(expected);
  });

  it("tools come first, as chat's", () => {
    const tool = { type: "function", name: "read", parameters: { type: "object" } };
    const body = { model: "m", instructions: "s", tools: [tool], input: "hi" };
    expect(
      text(body).startsWith(`${STX}tools${RS}${JSON.stringify([tool])}${ETX}${STX}system`),
    ).toBe(true);
  });

  it("message items keep role and content parts, not ids, statuses or annotations", () => {
    const reply = (id: string, status: string) => ({
      type: "message",
      id,
      status,
      role: "assistant",
      content: [{ type: "output_text", text: "done", annotations: [{ x: id }], logprobs: [] }],
    });
    expect(text(input(reply("msg_1", "completed")))).toBe(`${STX}assistant${RS}done${ETX}`);
    expect(text(input(reply("msg_2", "in_progress")))).toBe(text(input(reply("msg_1", "x"))));
    const developer = { type: "message", role: "developer", content: "rules" };
    expect(text(input(developer))).toBe(`${STX}developer${RS}rules${ETX}`);
  });

  it("image, file and audio parts are tagged with what the model sees; refusals kept", () => {
    const parts = [
      { type: "input_image", image_url: "data:image/png;base64,AA", detail: "high" },
      { type: "input_image", file_id: "file_1" },
      { type: "input_file", file_data: "JVBER", filename: "a.pdf" },
      { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
      { type: "refusal", refusal: "no" },
    ];
    expect(text(input({ role: "user", content: parts }))).toBe(
      `${STX}user${RS}${SUB}image${US}data:image/png;base64,AA${SUB}${SUB}image${US}file_1${SUB}` +
        `${SUB}file${US}JVBER${SUB}${SUB}audio${US}UklG${SUB}no${ETX}`,
    );
  });

  it("function_call and its output render as chat's tool call and tool message", () => {
    const call = {
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "read",
      arguments: '{"path":"a"}',
      status: "completed",
    };
    const output = { type: "function_call_output", call_id: "call_1", output: "42 lines" };
    const expected = `${STX}assistant${RS}${GS}read${US}{"path":"a"}${ETX}${STX}tool${RS}42 lines${ETX}`;
    expect(text(input(call, output))).toBe(expected);
    const chat = {
      model: "m",
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", function: { name: "read", arguments: '{"path":"a"}' } }],
        },
        { role: "tool", tool_call_id: "c", content: "42 lines" },
      ],
    };
    expect(canonicalPrompt(chat)).toBe(expected);
    const parts = { ...output, output: [{ type: "input_text", text: "42 lines" }] };
    expect(text(input(call, parts))).toBe(expected);
  });

  it("custom tool calls (Codex's freeform tools) render like function calls", () => {
    const call = {
      type: "custom_tool_call",
      call_id: "c",
      name: "apply_patch",
      input: "*** Begin",
    };
    const output = { type: "custom_tool_call_output", call_id: "c", output: "ok" };
    expect(text(input(call, output))).toBe(
      `${STX}assistant${RS}${GS}apply_patch${US}*** Begin${ETX}${STX}tool${RS}ok${ETX}`,
    );
  });

  it("reasoning keeps its summary, content and encrypted content", () => {
    const reasoning = {
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "plan" }],
      content: [{ type: "reasoning_text", text: "think" }],
      encrypted_content: "gAAA",
    };
    expect(text(input(reasoning))).toBe(
      `${STX}reasoning${RS}planthink${SUB}encrypted${US}gAAA${SUB}${ETX}`,
    );
  });

  it("an unknown item is a record of its type holding its JSON; unknown parts likewise", () => {
    const item = { type: "web_search_call", id: "ws_1", status: "completed" };
    expect(text(input(item))).toBe(`${STX}web_search_call${RS}${JSON.stringify(item)}${ETX}`);
    const part = { type: "input_video", url: "v" };
    expect(text(input({ role: "user", content: [part] }))).toContain(
      `${SUB}input_video${US}${JSON.stringify(part)}${SUB}`,
    );
  });

  it("ignores fields the model does not see", () => {
    const base = { model: "m", instructions: "s", input: "hi" };
    const noisy = {
      ...base,
      store: true,
      stream: true,
      temperature: 0.3,
      max_output_tokens: 100,
      metadata: { a: "b" },
      reasoning: { effort: "high" },
      parallel_tool_calls: false,
      previous_response_id: "resp_1",
    };
    expect(text(noisy)).toBe(text(base));
  });

  it("distinguishes roles, instructions, content, tools and item types", () => {
    const variants = [
      { input: "hi" },
      { input: [{ role: "assistant", content: "hi" }] },
      { instructions: "hi" },
      { input: "hi!" },
      { tools: [{ type: "function", name: "f" }], input: "hi" },
      { input: [{ type: "function_call", name: "f", arguments: "{}" }] },
      { input: [{ type: "function_call", name: "f", arguments: '{"a":1}' }] },
      { input: [{ type: "function_call_output", output: "hi" }] },
      { input: [{ type: "reasoning", summary: [{ type: "summary_text", text: "hi" }] }] },
    ];
    const texts = variants.map((v) => text({ model: "m", ...v }));
    expect(new Set(texts).size).toBe(variants.length);
  });
});

describe("Responses canonical prompt: hostile shapes", () => {
  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const part = fc.oneof(
    anyJson,
    fc.record({
      type: fc.constantFrom("input_text", "input_image", "input_file", "input_audio", "toString"),
      text: anyJson,
      image_url: anyJson,
      input_audio: anyJson,
    }),
  );
  const item = fc.oneof(
    anyJson,
    fc.record({
      type: fc.constantFrom(
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "reasoning",
        "constructor",
        "",
      ),
      role: anyJson,
      content: fc.oneof(anyJson, fc.array(part)),
      output: fc.oneof(anyJson, fc.array(part)),
      summary: fc.oneof(anyJson, fc.array(part)),
      name: anyJson,
      arguments: anyJson,
      encrypted_content: anyJson,
    }),
  );
  const body = fc.record(
    {
      model: fc.constant("m"),
      instructions: anyJson,
      tools: fc.oneof(anyJson, fc.array(anyJson)),
      input: fc.oneof(anyJson, fc.array(item)),
    },
    { requiredKeys: ["model"] },
  );

  it("any JSON in any field is hashed, never thrown on", () => {
    fc.assert(
      fc.property(body, (b) => {
        const parsed = JSON.parse(JSON.stringify(b));
        expect(() => promptKey(parsed, 64, "responses")).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});

describe("Responses canonical prompt: prefix property over every item type", () => {
  const words = fc.string({ unit: "binary", maxLength: 20 });
  const part = fc.oneof(
    fc.record({ type: fc.constant("input_text"), text: words }),
    fc.record({ type: fc.constant("input_image"), image_url: words, detail: fc.constant("auto") }),
    fc.record({ type: fc.constant("input_file"), file_id: words }),
  );
  const item = fc.oneof(
    fc.record({
      role: fc.constantFrom("user", "developer"),
      content: fc.oneof(words, fc.array(part, { maxLength: 3 })),
    }),
    fc.record({
      type: fc.constant("message"),
      id: words,
      status: fc.constant("completed"),
      role: fc.constant("assistant"),
      content: fc.array(
        fc.record({ type: fc.constant("output_text"), text: words, annotations: fc.constant([]) }),
        { maxLength: 2 },
      ),
    }),
    fc.record({
      type: fc.constant("function_call"),
      id: words,
      call_id: words,
      name: words,
      arguments: words,
    }),
    fc.record({
      type: fc.constant("function_call_output"),
      call_id: words,
      output: fc.oneof(words, fc.array(part, { maxLength: 2 })),
    }),
    fc.record({ type: fc.constant("custom_tool_call"), call_id: words, name: words, input: words }),
    fc.record({
      type: fc.constant("reasoning"),
      id: words,
      summary: fc.array(fc.record({ type: fc.constant("summary_text"), text: words }), {
        maxLength: 2,
      }),
      encrypted_content: words,
    }),
    fc.record({
      type: fc.constant("local_shell_call"),
      id: words,
      call_id: words,
      action: fc.jsonValue({ maxDepth: 2 }),
    }),
  );

  it("appending items extends the bytes", () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 6 }),
        fc.array(item, { maxLength: 4 }),
        (head, tail) => {
          const body = (input: unknown[]) => ({ model: "m", instructions: "s", input });
          const before = new TextEncoder().encode(text(body(head)));
          const after = new TextEncoder().encode(text(body([...head, ...tail])));
          expect(after.subarray(0, before.length)).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
