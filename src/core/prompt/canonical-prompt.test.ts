import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalPrompt } from "./canonical-prompt.ts";
import { promptKey } from "./prompt-key.ts";

const text = fc.string({ unit: "binary", maxLength: 40 });
const part = fc.oneof(
  fc.record({ type: fc.constant("text"), text }),
  fc.record({ type: fc.constant("image_url"), image_url: fc.record({ url: text }) }),
);
const toolCall = fc.record({
  id: text,
  type: fc.constant("function"),
  function: fc.record({ name: text, arguments: text }),
});
const message = fc.oneof(
  fc.record({ role: fc.constantFrom("system", "user", "assistant"), content: text }),
  fc.record({ role: fc.constant("user"), content: fc.array(part, { maxLength: 3 }), name: text }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.constant(null),
    tool_calls: fc.array(toolCall, { maxLength: 2 }),
  }),
  fc.record({ role: fc.constant("tool"), tool_call_id: text, content: text }),
);
const tools = fc.option(
  fc.array(fc.record({ type: fc.constant("function"), function: fc.record({ name: text }) }), {
    minLength: 1,
    maxLength: 2,
  }),
  { nil: undefined },
);

const utf8 = (s: string) => new TextEncoder().encode(s);
function isBytePrefix(a: Uint8Array, b: Uint8Array): boolean {
  return a.length <= b.length && a.every((x, i) => x === b[i]);
}

describe("canonicalPrompt", () => {
  it("appending messages extends the bytes (prefix property)", () => {
    fc.assert(
      fc.property(
        tools,
        fc.array(message, { maxLength: 5 }),
        fc.array(message, { maxLength: 4 }),
        (t, head, tail) => {
          const a = { model: "m", tools: t, messages: head };
          const b = { model: "m", tools: t, messages: [...head, ...tail] };
          expect(isBytePrefix(utf8(canonicalPrompt(a)), utf8(canonicalPrompt(b)))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("extending a completion prompt extends the bytes", () => {
    fc.assert(
      fc.property(text, text, (p, more) => {
        const a = canonicalPrompt({ model: "m", prompt: p });
        const b = canonicalPrompt({ model: "m", prompt: p + more });
        expect(isBytePrefix(utf8(a), utf8(b))).toBe(true);
      }),
    );
  });

  it("extending a token-id prompt extends the bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.nat()), fc.array(fc.nat()), (p, more) => {
        const a = canonicalPrompt({ model: "m", prompt: p });
        const b = canonicalPrompt({ model: "m", prompt: [...p, ...more] });
        expect(b.startsWith(a)).toBe(true);
      }),
    );
  });

  it("ignores fields the model does not see", () => {
    const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const noisy = {
      ...base,
      temperature: 0.2,
      stream: true,
      user: "u1",
      messages: [{ role: "user", content: "hi", extra: 1 }],
    };
    expect(canonicalPrompt(noisy)).toBe(canonicalPrompt(base));
  });

  it("distinguishes role, name, content, tools and tool calls", () => {
    const variants = [
      { messages: [{ role: "user", content: "hi" }] },
      { messages: [{ role: "system", content: "hi" }] },
      { messages: [{ role: "user", name: "bob", content: "hi" }] },
      { messages: [{ role: "user", content: "hi!" }] },
      {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "hi" },
              { type: "image_url", image_url: { url: "u" } },
            ],
          },
        ],
      },
      {
        tools: [{ type: "function", function: { name: "f" } }],
        messages: [{ role: "user", content: "hi" }],
      },
      {
        messages: [
          { role: "assistant", tool_calls: [{ function: { name: "f", arguments: "{}" } }] },
        ],
      },
      {
        messages: [
          { role: "assistant", tool_calls: [{ function: { name: "f", arguments: '{"a":1}' } }] },
        ],
      },
    ];
    const texts = variants.map((v) => canonicalPrompt({ model: "m", ...v }));
    expect(new Set(texts).size).toBe(variants.length);
  });

  it("renders string content and one text part alike", () => {
    const a = canonicalPrompt({ model: "m", messages: [{ role: "user", content: "hello" }] });
    const b = canonicalPrompt({
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
    });
    expect(a).toBe(b);
  });
});

describe("promptKey", () => {
  const long = "lorem ipsum dolor sit amet ".repeat(200);
  const convo = (turns: number) => ({
    model: "llama",
    messages: Array.from({ length: turns }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `${i}:${long}`,
    })),
  });

  it("a longer conversation's hashes extend the shorter one's", () => {
    const a = promptKey(convo(2), 256);
    const b = promptKey(convo(5), 256);
    expect(a.chunkHashes.length).toBeGreaterThan(10);
    expect(Array.from(b.chunkHashes.slice(0, a.chunkHashes.length))).toEqual(
      Array.from(a.chunkHashes),
    );
  });

  it("different models never share a prefix hash", () => {
    const a = promptKey({ ...convo(2), model: "a" }, 256);
    const b = promptKey({ ...convo(2), model: "b" }, 256);
    const shared = Array.from(a.chunkHashes).filter((h) => b.chunkHashes.includes(h));
    expect(shared).toEqual([]);
  });

  it("hashes only full chunks and estimates tokens from bytes", () => {
    const key = promptKey({ model: "m", prompt: "x".repeat(1000) }, 256);
    expect(key.byteLength).toBe(1000 + "\u0002prompt\u001e".length);
    expect(key.chunkHashes.length).toBe(Math.floor(key.byteLength / 256));
    expect(key.promptTokens).toBe(Math.ceil(key.byteLength / 4));
    expect(promptKey({ model: "m", prompt: "short" }, 256).chunkHashes.length).toBe(0);
  });

  it("every hash is a safe integer and the key is deterministic", () => {
    const a = promptKey(convo(3), 64);
    const b = promptKey(convo(3), 64);
    expect(Array.from(a.chunkHashes)).toEqual(Array.from(b.chunkHashes));
    for (const h of a.chunkHashes) expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
    expect(new Set(a.chunkHashes).size).toBe(a.chunkHashes.length);
  });

  it("handles multi-byte UTF-8 across chunk boundaries", () => {
    const emoji = { model: "m", messages: [{ role: "user", content: "héllo 🌍 ".repeat(300) }] };
    const more = { model: "m", messages: [...emoji.messages, { role: "user", content: "再见" }] };
    const a = promptKey(emoji, 64);
    const b = promptKey(more, 64);
    expect(Array.from(b.chunkHashes.slice(0, a.chunkHashes.length))).toEqual(
      Array.from(a.chunkHashes),
    );
  });
});

describe("content parts of unknown types", () => {
  it("a type named like an Object.prototype member is hashed, not a TypeError (found by the fuzz)", () => {
    for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      const chat = (part: unknown) => ({
        model: "m",
        messages: [{ role: "user", content: [part] }],
      });
      const bare = JSON.parse(`{"type":"${type}"}`);
      const own = JSON.parse(`{"type":"${type}","${type}":{"a":1}}`);
      expect(() => promptKey(chat(bare), 64), type).not.toThrow();
      expect(canonicalPrompt(chat(own))).toContain(`${type}\u001f{"a":1}`);
    }
  });
});
