/**
 * Element checks of an Anthropic Messages request's arrays (`messages` and their content blocks,
 * `system` blocks, `tools`), by hand as `llm-fields.ts` checks chat's: one pass, no allocation,
 * stopping at the first bad element, which is the only issue reported. Only what the router
 * reads to route (src/core/prompt/messages-prompt.ts) and what Anthropic's API requires of it
 * (https://platform.claude.com/docs/en/api/messages): roles `user` and `assistant`, content a
 * string or blocks each with a `type`, the field each known block type is read by (`text`'s
 * text, `tool_use`'s name and input, `tool_result`'s id); a type the router does not know is
 * the engine's to accept or refuse.
 */
import type { FieldIssue } from "./llm-fields.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const ROLES = new Set(["user", "assistant"]);

/** The field each known block type must have, and what it must be. */
const REQUIRED: Readonly<Record<string, readonly [string, "string" | "object"][]>> = {
  text: [["text", "string"]],
  image: [["source", "object"]],
  document: [["source", "object"]],
  tool_use: [
    ["id", "string"],
    ["name", "string"],
    ["input", "object"],
  ],
  tool_result: [["tool_use_id", "string"]],
  thinking: [["thinking", "string"]],
  redacted_thinking: [["data", "string"]],
};

function fieldIssue(block: Json, field: string, kind: "string" | "object"): FieldIssue | undefined {
  const value = block[field];
  if (kind === "string" && typeof value !== "string") {
    return { path: [field], message: "expected a string" };
  }
  if (kind === "object" && !isObject(value))
    return { path: [field], message: "expected an object" };
  return undefined;
}

const at = (prefix: (string | number)[], issue: FieldIssue): FieldIssue => ({
  path: [...prefix, ...issue.path],
  message: issue.message,
});

/** One content block: an object with a string `type` and its type's fields. */
function blockIssue(block: unknown, nested: boolean): FieldIssue | undefined {
  if (!isObject(block)) return { path: [], message: "expected a content block object" };
  const type = block.type;
  if (typeof type !== "string" || type.length === 0) {
    return { path: ["type"], message: "expected a non-empty string" };
  }
  // Own keys only: a block typed `constructor` or `__proto__` must not read Object's members.
  for (const [field, kind] of (Object.hasOwn(REQUIRED, type) && REQUIRED[type]) || []) {
    const issue = fieldIssue(block, field, kind);
    if (issue) return issue;
  }
  // A tool result's own content: a string or blocks (no tool results inside tool results).
  if (type === "tool_result" && block.content !== undefined) {
    const content = block.content;
    if (nested) return { path: ["type"], message: "a tool_result cannot hold a tool_result" };
    if (typeof content === "string") return undefined;
    if (!Array.isArray(content))
      return { path: ["content"], message: "expected a string or blocks" };
    return blocksIssue(content, true, ["content"]);
  }
  return undefined;
}

function blocksIssue(
  blocks: unknown[],
  nested: boolean,
  prefix: (string | number)[],
): FieldIssue | undefined {
  for (let i = 0; i < blocks.length; i++) {
    const issue = blockIssue(blocks[i], nested);
    if (issue) return at([...prefix, i], issue);
  }
  return undefined;
}

/** At least one message, each `{ role: "user" | "assistant", content: string | blocks }`. */
export function anthropicMessagesIssue(messages: unknown[]): FieldIssue | undefined {
  if (messages.length === 0) return { path: [], message: "expected at least one message" };
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message)) return { path: [i], message: "expected a message object" };
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      return { path: [i, "role"], message: 'expected "user" or "assistant"' };
    }
    const content = message.content;
    if (typeof content === "string") continue;
    if (!Array.isArray(content)) {
      return { path: [i, "content"], message: "expected a string or an array of content blocks" };
    }
    const issue = blocksIssue(content, false, [i, "content"]);
    if (issue) return issue;
  }
  return undefined;
}

/** A system prompt's blocks: each `{ type: "text", text: string }`. */
export function systemBlocksIssue(blocks: unknown[]): FieldIssue | undefined {
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (!isObject(block) || block.type !== "text") {
      return { path: [i, "type"], message: 'expected a text block ({"type":"text"})' };
    }
    if (typeof block.text !== "string") return { path: [i, "text"], message: "expected a string" };
  }
  return undefined;
}

/** Tools: each an object with a non-empty string `name` (client and server tools alike). */
export function toolsIssue(tools: unknown[]): FieldIssue | undefined {
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    if (!isObject(tool)) return { path: [i], message: "expected a tool object" };
    if (typeof tool.name !== "string" || tool.name.length === 0) {
      return { path: [i, "name"], message: "expected a non-empty string" };
    }
  }
  return undefined;
}
