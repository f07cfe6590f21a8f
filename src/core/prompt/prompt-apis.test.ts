import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  chatBody,
  codingSession,
  messagesBody,
  responsesBody,
  type Turn,
  upTo,
} from "../test-support/agent-conversation.ts";
import { canonicalText, type PromptApi, promptKey } from "./prompt-key.ts";

const forms = {
  chat: chatBody,
  messages: messagesBody,
  responses: responsesBody,
} as const satisfies Partial<Record<PromptApi, unknown>>;
const apis = Object.keys(forms) as (keyof typeof forms)[];

const utf8 = (s: string) => new TextEncoder().encode(s);
function isBytePrefix(a: Uint8Array, b: Uint8Array): boolean {
  return a.length <= b.length && a.every((x, i) => x === b[i]);
}

const words = fc.string({ unit: "binary", maxLength: 60 });
const turn: fc.Arbitrary<Turn> = fc.oneof(
  fc.record({ kind: fc.constant("user" as const), text: words }),
  fc.record({ kind: fc.constant("assistant" as const), text: words }),
  fc.record({
    kind: fc.constant("call" as const),
    id: fc.string({ maxLength: 8 }),
    name: fc.string({ maxLength: 12 }),
    args: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
    result: words,
  }),
);
const tool = fc.record({
  name: fc.string({ maxLength: 12 }),
  description: words,
  parameters: fc.constant({ type: "object", properties: { path: { type: "string" } } }),
});
const conversation = (turns: fc.Arbitrary<Turn>) =>
  fc.record({
    system: words,
    tools: fc.array(tool, { maxLength: 3 }),
    turns: fc.array(turns, { maxLength: 12 }),
  });

describe.each(apis)("prefix property through %s", (api) => {
  it("appending turns (replies, tool calls and their results) extends the bytes", () => {
    fc.assert(
      fc.property(conversation(turn), fc.nat(), (c, cut) => {
        const k = c.turns.length === 0 ? 0 : cut % (c.turns.length + 1);
        const earlier = utf8(canonicalText(forms[api]("m", upTo(c, k)), api));
        const later = utf8(canonicalText(forms[api]("m", c), api));
        expect(isBytePrefix(earlier, later)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("each turn's chunk hashes extend the previous turn's", () => {
    const c = codingSession(30);
    let previous: number[] = [];
    for (let k = 1; k <= c.turns.length; k++) {
      const { chunkHashes } = promptKey(forms[api]("m", upTo(c, k)), 256, api);
      expect(chunkHashes.slice(0, previous.length)).toEqual(previous);
      previous = chunkHashes;
    }
    expect(previous.length).toBeGreaterThan(40);
  });
});

describe("one conversation through each API", () => {
  it("a text-only conversation renders to the same bytes through every API", () => {
    const textTurn = turn.filter((t) => t.kind !== "call");
    fc.assert(
      fc.property(conversation(textTurn), (raw) => {
        const c = { ...raw, tools: [] };
        const [chat, ...others] = apis.map((api) => canonicalText(forms[api]("m", c), api));
        for (const other of others) expect(other).toBe(chat);
      }),
    );
  });

  it("with tools and tool calls, the bytes differ by the framing only", () => {
    // Messages: a tool result sits in a user message as SUB tool_result US ... SUB (+14 bytes);
    // tools lose chat's `"type":"function","function":{` and `}` (-31) but say `input_schema`
    // for `parameters` (+2). Responses: tools lose `"function":{` and `}` (-13).
    fc.assert(
      fc.property(conversation(turn), (c) => {
        const calls = c.turns.filter((t) => t.kind === "call").length;
        const bytes = (api: keyof typeof forms) =>
          utf8(canonicalText(forms[api]("m", c), api)).length;
        expect(bytes("messages") - bytes("chat")).toBe(14 * calls - 29 * c.tools.length);
        expect(bytes("chat") - bytes("responses")).toBe(13 * c.tools.length);
      }),
    );
  });

  it("a 30-turn agent session gives the same number of chunk hashes, give or take the framing", () => {
    const c = codingSession(30);
    const counts = apis.map((api) => promptKey(forms[api]("m", c), 256, api).chunkHashes.length);
    const [chat, messages, responses] = counts as [number, number, number];
    expect(chat).toBeGreaterThan(40);
    // 10 tool results (+140 bytes) and 3 tools (-87): within one chunk of 256 bytes.
    expect(Math.abs(messages - chat)).toBeLessThanOrEqual(1);
    expect(Math.abs(responses - chat)).toBeLessThanOrEqual(1);
  });

  it("chat and completions keep the existing canonicaliser (api defaults to chat)", () => {
    const chat = chatBody("m", codingSession(6));
    expect(promptKey(chat, 256, "chat")).toEqual(promptKey(chat));
    expect(promptKey(chat, 256, "completions")).toEqual(promptKey(chat));
    const completion = { model: "m", prompt: "x".repeat(600) };
    expect(promptKey(completion, 256, "completions")).toEqual(promptKey(completion, 256));
  });
});
