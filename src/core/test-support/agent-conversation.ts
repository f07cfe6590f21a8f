/**
 * Test-only: one agent conversation (a system prompt, tools, and turns: user text, assistant
 * text, tool calls with their results) written as the request body of each API, the way the
 * clients of each send it: chat completions, Anthropic Messages (with `cache_control` on the
 * newest block, as Claude Code marks it), OpenAI Responses. The same conversation through any
 * API, for the canonicalisers' and the engines' tests.
 */

export type Turn =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "call"; id: string; name: string; args: Record<string, unknown>; result: string };

export interface Tool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface AgentConversation {
  system: string;
  tools: Tool[];
  turns: Turn[];
}

type Body = { model: string; [field: string]: unknown };

export function chatBody(model: string, c: AgentConversation): Body {
  const messages: unknown[] = [{ role: "system", content: c.system }];
  for (const t of c.turns) {
    if (t.kind !== "call") messages.push({ role: t.kind, content: t.text });
    else {
      const fn = { name: t.name, arguments: JSON.stringify(t.args) };
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id: t.id, type: "function", function: fn }],
      });
      messages.push({ role: "tool", tool_call_id: t.id, content: t.result });
    }
  }
  const tools = c.tools.map((tool) => ({ type: "function", function: tool }));
  return { model, messages, ...(tools.length > 0 ? { tools } : {}) };
}

export function messagesBody(model: string, c: AgentConversation): Body {
  const messages: { role: string; content: Record<string, unknown>[] }[] = [];
  for (const t of c.turns) {
    if (t.kind === "user")
      messages.push({ role: "user", content: [{ type: "text", text: t.text }] });
    else if (t.kind === "assistant") {
      messages.push({ role: "assistant", content: [{ type: "text", text: t.text }] });
    } else {
      const use = { type: "tool_use", id: t.id, name: t.name, input: t.args };
      messages.push({ role: "assistant", content: [use] });
      const result = { type: "tool_result", tool_use_id: t.id, content: t.result };
      messages.push({ role: "user", content: [result] });
    }
  }
  const last = messages.at(-1)?.content.at(-1);
  if (last) last.cache_control = { type: "ephemeral" };
  const tools = c.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.parameters,
  }));
  return {
    model,
    max_tokens: 64,
    system: [{ type: "text", text: c.system, cache_control: { type: "ephemeral" } }],
    messages,
    ...(tools.length > 0 ? { tools } : {}),
  };
}

export function responsesBody(model: string, c: AgentConversation): Body {
  const input: unknown[] = [];
  for (const t of c.turns) {
    if (t.kind === "user") input.push({ role: "user", content: t.text });
    else if (t.kind === "assistant") {
      const text = { type: "output_text", text: t.text, annotations: [] };
      input.push({ type: "message", role: "assistant", status: "completed", content: [text] });
    } else {
      const args = JSON.stringify(t.args);
      input.push({ type: "function_call", call_id: t.id, name: t.name, arguments: args });
      input.push({ type: "function_call_output", call_id: t.id, output: t.result });
    }
  }
  const tools = c.tools.map((t) => ({ type: "function", ...t }));
  return {
    model,
    store: false,
    instructions: c.system,
    input,
    ...(tools.length > 0 ? { tools } : {}),
  };
}

/** The conversation's first `turns` turns. */
export function upTo(c: AgentConversation, turns: number): AgentConversation {
  return { ...c, turns: c.turns.slice(0, turns) };
}

/**
 * A coding-agent session: a long system prompt and tools, then user requests, tool calls with
 * their results (files of 20 to 80 lines) and replies. `size` scales the system prompt and the
 * files (a small model's context is short).
 */
export function codingSession(turns: number, size = 1): AgentConversation {
  const scaled = (n: number) => Math.max(1, Math.round(n * size));
  const file = (i: number) => `export const line${i} = ${i};\n`.repeat(scaled(20 + (i % 7) * 10));
  const out: Turn[] = [];
  for (let i = 0; out.length < turns; i++) {
    out.push({ kind: "user", text: `Step ${i}: fix the failing test in module ${i}.` });
    out.push({
      kind: "call",
      id: `c${i}`,
      name: "read_file",
      args: { path: `m${i}.ts` },
      result: file(i),
    });
    out.push({ kind: "assistant", text: `Module ${i} fixed: the off-by-one in line ${i}.` });
  }
  return {
    system: "You are a careful coding agent. Read before you edit. ".repeat(scaled(60)),
    tools: ["read_file", "edit_file", "run_tests"].map((name) => ({
      name,
      description: `The ${name} tool: what it does, when to use it, its limits. `.repeat(4),
      parameters: { type: "object", properties: { path: { type: "string" } } },
    })),
    turns: out.slice(0, turns),
  };
}
