import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalPrompt } from "./canonical-prompt.ts";
import { canonicalText, promptKey } from "./prompt-key.ts";

const text = (body: unknown) => canonicalText(body, "messages");
const user = (content: unknown) => ({ model: "m", messages: [{ role: "user", content }] });
const [STX, ETX, GS, RS, US, SUB] = ["\u0002", "\u0003", "\u001d", "\u001e", "\u001f", "\u001a"];

describe("Messages canonical prompt: each block type", () => {
  it("system (string or text blocks) then the turns, as chat's system message and turns", () => {
    const turns = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ];
    const expected = `${STX}system${RS}be brief${ETX}${STX}user${RS}hi${ETX}${STX}assistant${RS}hello${ETX}`;
    expect(text({ model: "m", system: "be brief", messages: turns })).toBe(expected);
    const blocks = [
      { type: "text", text: "be " },
      { type: "text", text: "brief", cache_control: { type: "ephemeral" } },
    ];
    expect(text({ model: "m", system: blocks, messages: turns })).toBe(expected);
    const chat = { model: "m", messages: [{ role: "system", content: "be brief" }, ...turns] };
    expect(canonicalPrompt(chat)).toBe(expected);
  });

  it("Claude Code's per-request billing header block is not in the key (vLLM drops it)", () => {
    const body = (hash: string) => ({
      model: "m",
      system: [
        { type: "text", text: `x-anthropic-billing-header: cc_version=2.1; cch=${hash};` },
        { type: "text", text: "You are Claude Code." },
      ],
      messages: [{ role: "user", content: "hi" }],
    });
    expect(text(body("a1"))).toBe(text(body("b2")));
    expect(text(body("a1"))).toBe(text({ ...body("a1"), system: "You are Claude Code." }));
  });

  it("tools come first, each without its cache_control", () => {
    const tool = { name: "read", description: "Read a file", input_schema: { type: "object" } };
    const marked = { ...tool, cache_control: { type: "ephemeral" } };
    const expected = `${STX}tools${RS}[${JSON.stringify(tool)},${JSON.stringify(tool)}]${ETX}`;
    expect(text({ model: "m", tools: [tool, marked], messages: [] })).toBe(expected);
    expect(text({ model: "m", tools: [], messages: [] })).toBe("");
  });

  it("image and document blocks are tagged with their source's data, URL or file id", () => {
    const image = (source: unknown) => text(user([{ type: "image", source }]));
    expect(image({ type: "base64", media_type: "image/png", data: "AAAA" })).toContain(
      `${SUB}image${US}AAAA${SUB}`,
    );
    expect(image({ type: "url", url: "https://x/y.png" })).toContain(
      `${SUB}image${US}https://x/y.png${SUB}`,
    );
    expect(image({ type: "file", file_id: "file_1" })).toContain(`${SUB}image${US}file_1${SUB}`);
    const doc = text(user([{ type: "document", source: { type: "text", data: "the doc" } }]));
    expect(doc).toContain(`${SUB}document${US}the doc${SUB}`);
  });

  it("tool_use is a tool call (name, input as JSON), as chat renders tool_calls", () => {
    const input = { path: "src/a.ts", lines: [1, 2] };
    const use = { type: "tool_use", id: "toolu_1", name: "read", input };
    const body = { model: "m", messages: [{ role: "assistant", content: [use] }] };
    expect(text(body)).toBe(`${STX}assistant${RS}${GS}read${US}${JSON.stringify(input)}${ETX}`);
    const chat = {
      model: "m",
      messages: [
        {
          role: "assistant",
          tool_calls: [{ id: "x", function: { name: "read", arguments: JSON.stringify(input) } }],
        },
      ],
    };
    expect(canonicalPrompt(chat)).toBe(text(body));
    // The id is the client's bookkeeping, not text the model reads.
    const other = {
      model: "m",
      messages: [{ role: "assistant", content: [{ ...use, id: "t9" }] }],
    };
    expect(text(other)).toBe(text(body));
  });

  it("tool_result holds its content, a string or blocks", () => {
    const asString = text(user([{ type: "tool_result", tool_use_id: "t", content: "42 lines" }]));
    expect(asString).toBe(`${STX}user${RS}${SUB}tool_result${US}42 lines${SUB}${ETX}`);
    const blocks = [
      { type: "text", text: "42 lines" },
      { type: "image", source: { type: "base64", data: "QQ" } },
    ];
    const asBlocks = text(user([{ type: "tool_result", tool_use_id: "t", content: blocks }]));
    expect(asBlocks).toBe(
      `${STX}user${RS}${SUB}tool_result${US}42 lines${SUB}image${US}QQ${SUB}${SUB}${ETX}`,
    );
  });

  it("thinking keeps its text, not its signature; redacted_thinking its data", () => {
    const thinking = (signature: string) =>
      text({
        model: "m",
        messages: [
          { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature }] },
        ],
      });
    expect(thinking("sig1")).toBe(`${STX}assistant${RS}${SUB}thinking${US}hmm${SUB}${ETX}`);
    expect(thinking("sig2")).toBe(thinking("sig1"));
    const redacted = text(user([{ type: "redacted_thinking", data: "opaque" }]));
    expect(redacted).toContain(`${SUB}redacted_thinking${US}opaque${SUB}`);
  });

  it("an unknown block is its JSON without cache_control", () => {
    const block = { type: "search_result", source: "s", title: "t", content: [] };
    const marked = { ...block, cache_control: { type: "ephemeral" } };
    const expected = `${SUB}search_result${US}${JSON.stringify(block)}${SUB}`;
    expect(text(user([block]))).toContain(expected);
    expect(text(user([marked]))).toBe(text(user([block])));
  });

  it("ignores fields the model does not see", () => {
    const base = { model: "m", system: "s", messages: [{ role: "user", content: "hi" }] };
    const noisy = {
      ...base,
      max_tokens: 100,
      stream: true,
      temperature: 0.3,
      metadata: { user_id: "u" },
      tool_choice: { type: "auto" },
      thinking: { type: "enabled", budget_tokens: 1024 },
      stop_sequences: ["x"],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "x" } }] },
      ],
    };
    expect(text(noisy)).toBe(text(base));
  });

  it("distinguishes role, system, content, tools, tool input and block types", () => {
    const variants = [
      { messages: [{ role: "user", content: "hi" }] },
      { messages: [{ role: "assistant", content: "hi" }] },
      { system: "hi", messages: [] },
      { messages: [{ role: "user", content: "hi!" }] },
      { tools: [{ name: "f" }], messages: [{ role: "user", content: "hi" }] },
      { messages: [{ role: "user", content: [{ type: "tool_use", name: "f", input: {} }] }] },
      { messages: [{ role: "user", content: [{ type: "tool_use", name: "f", input: { a: 1 } }] }] },
      { messages: [{ role: "user", content: [{ type: "tool_result", content: "hi" }] }] },
      { messages: [{ role: "user", content: [{ type: "thinking", thinking: "hi" }] }] },
      { messages: [{ role: "user", content: [{ type: "image", source: { data: "hi" } }] }] },
    ];
    const texts = variants.map((v) => text({ model: "m", ...v }));
    expect(new Set(texts).size).toBe(variants.length);
  });
});

describe("Messages canonical prompt: hostile shapes", () => {
  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const block = fc.oneof(
    anyJson,
    fc.record({
      type: fc.constantFrom(
        "text",
        "image",
        "document",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "constructor",
        "__proto__",
        "toString",
      ),
      text: anyJson,
      source: anyJson,
      input: anyJson,
      content: anyJson,
      thinking: anyJson,
      data: anyJson,
      name: anyJson,
      cache_control: anyJson,
    }),
  );
  const body = fc.record(
    {
      model: fc.constant("m"),
      system: fc.oneof(anyJson, fc.array(block)),
      tools: fc.oneof(anyJson, fc.array(anyJson)),
      messages: fc.oneof(
        anyJson,
        fc.array(fc.oneof(anyJson, fc.record({ role: anyJson, content: fc.array(block) }))),
      ),
    },
    { requiredKeys: ["model"] },
  );

  it("any JSON in any field is hashed, never thrown on", () => {
    fc.assert(
      fc.property(body, (b) => {
        // Through JSON, as the Worker receives it (`__proto__` an own key, no undefined).
        const parsed = JSON.parse(JSON.stringify(b));
        expect(() => promptKey(parsed, 64, "messages")).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });

  it("a block type named like an Object.prototype member is hashed, not a TypeError", () => {
    for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      const bare = JSON.parse(`{"type":"${type}"}`);
      expect(() => promptKey(user([bare]), 64, "messages"), type).not.toThrow();
      expect(text(user([bare]))).toContain(`${SUB}${type}${US}{"type":"${type}"}${SUB}`);
    }
  });
});

describe("Messages canonical prompt: prefix property over every block type", () => {
  const words = fc.string({ unit: "binary", maxLength: 20 });
  const inner = fc.oneof(
    fc.record({ type: fc.constant("text"), text: words }),
    fc.record({
      type: fc.constant("image"),
      source: fc.record({ type: fc.constant("base64"), data: words }),
    }),
  );
  const block = fc.oneof(
    inner,
    fc.record({
      type: fc.constant("tool_use"),
      id: words,
      name: words,
      input: fc.jsonValue({ maxDepth: 2 }),
    }),
    fc.record({
      type: fc.constant("tool_result"),
      tool_use_id: words,
      content: fc.oneof(words, fc.array(inner, { maxLength: 3 })),
    }),
    fc.record({ type: fc.constant("thinking"), thinking: words, signature: words }),
    fc.record({ type: fc.constant("redacted_thinking"), data: words }),
    fc.record({
      type: fc.constant("document"),
      source: fc.record({ type: fc.constant("text"), data: words }),
    }),
    fc.record({
      type: fc.constant("search_result"),
      title: words,
      content: fc.array(inner, { maxLength: 2 }),
    }),
  );
  const message = fc.record({
    role: fc.constantFrom("user", "assistant"),
    content: fc.oneof(words, fc.array(block, { minLength: 1, maxLength: 3 })),
  });

  /** As Claude Code sends each request: the cache marker on the newest message's last block. */
  function marked(messages: { role: string; content: unknown }[]) {
    const copy = structuredClone(messages);
    const last = copy.at(-1);
    if (last && Array.isArray(last.content)) {
      const end = last.content.at(-1) as Record<string, unknown>;
      end.cache_control = { type: "ephemeral" };
    }
    return { model: "m", system: [{ type: "text", text: "s" }], messages: copy };
  }

  it("appending messages extends the bytes, wherever the cache marker moved", () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 6 }),
        fc.array(message, { maxLength: 4 }),
        (head, tail) => {
          const before = new TextEncoder().encode(text(marked(head)));
          const after = new TextEncoder().encode(text(marked([...head, ...tail])));
          expect(after.subarray(0, before.length)).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
