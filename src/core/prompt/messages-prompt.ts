/**
 * Canonical text of an Anthropic Messages request (`POST /v1/messages`): what the engine will
 * tokenise, in the order it renders it. vLLM and llama.cpp turn the request into a chat
 * conversation (system first, then the turns) and render it with the model's chat template, so
 * this follows chat's canonicaliser (`canonical-prompt.ts`) record for record:
 *
 * - `tools` (if any): one record, each tool as JSON without `cache_control`;
 * - `system` (a string or an array of text blocks): a `system` record, as chat's system message.
 *   A block starting `x-anthropic-billing-header` is left out: Claude Code sends one with a hash
 *   that changes on every request, and vLLM drops it for that reason
 *   (`vllm/entrypoints/anthropic/serving.py`, `_convert_system_message`), so it is not in the
 *   engine's prompt and would break the key from its first chunk;
 * - each of `messages`: `STX role RS content ETX`, its content a string or blocks: `text` as its
 *   text; `image` and `document` tagged with their source's data, URL or file id; `tool_use` as a
 *   tool call (name, then the input as JSON), as chat renders `tool_calls`; `tool_result` as
 *   `SUB tool_result US content SUB` (its content a string or blocks, written the same way);
 *   `thinking` and `redacted_thinking` tagged with their text or data (the signature is an
 *   integrity check, not text the model reads); any other block tagged with its type and its
 *   JSON without `cache_control`.
 *
 * So a text-only conversation renders to the same bytes as the same conversation sent to
 * `/v1/chat/completions`, and hashes alike under one model (the engine, too, serves both APIs
 * from one prompt cache). Every other field (`max_tokens`, `stream`, `temperature`, `metadata`,
 * `thinking`'s budget, `tool_choice`, tool-use ids, `cache_control` markers...) is left out:
 * clients move `cache_control` to the newest turn on every request, and keeping it would break
 * the prefix property: appending a turn (the assistant's reply and the next user message, or a
 * `tool_use` and its `tool_result`) renders to text of which the earlier request's is a prefix.
 *
 * Wrong types never throw: a field of the wrong type renders as empty, a message that is not an
 * object as an empty record, as chat's canonicaliser does; the Worker's validation decides what
 * is a 400. Cost is linear in the body, written piece by piece to the sink; `tools`, `tool_use`
 * inputs and unknown blocks go through JSON.stringify, linear because the Worker bounds the
 * body's nesting depth before parsing it (`src/worker/validation/json-budget.ts`).
 */
import type { CanonicalSink } from "./framing.ts";
import {
  ETX,
  isObject,
  openRecord,
  STX,
  SUB,
  str,
  stringifyBlock,
  US,
  writeCall,
  writeTagged,
  writeToolList,
} from "./framing.ts";

/** What the model sees of an image's or document's source: its data, URL or file id. */
function sourceValue(source: unknown): string {
  if (!isObject(source)) return "";
  const value = str(source.data) || str(source.url) || str(source.file_id);
  return value || stringifyBlock(source);
}

function writeBlock(block: unknown, sink: CanonicalSink): void {
  if (typeof block === "string") {
    sink.text(block);
    return;
  }
  if (!isObject(block)) return;
  const type = str(block.type);
  switch (type) {
    case "text":
      sink.text(str(block.text));
      return;
    case "image":
    case "document":
      writeTagged(type, sourceValue(block.source), sink);
      return;
    case "tool_use":
      writeCall(str(block.name), JSON.stringify(block.input ?? null), sink);
      return;
    case "tool_result":
      sink.text(SUB);
      sink.text(type);
      sink.text(US);
      writeBlocks(block.content, sink);
      sink.text(SUB);
      return;
    case "thinking":
      writeTagged(type, str(block.thinking), sink);
      return;
    case "redacted_thinking":
      writeTagged(type, str(block.data), sink);
      return;
    default:
      writeTagged(type, stringifyBlock(block), sink);
  }
}

const BILLING_HEADER = "x-anthropic-billing-header";

function isBillingHeader(block: unknown): boolean {
  return isObject(block) && block.type === "text" && str(block.text).startsWith(BILLING_HEADER);
}

/** Content: a string, or an array of blocks. */
function writeBlocks(content: unknown, sink: CanonicalSink): void {
  if (typeof content === "string") sink.text(content);
  else if (Array.isArray(content)) for (const block of content) writeBlock(block, sink);
}

function writeMessage(message: unknown, sink: CanonicalSink): void {
  if (!isObject(message)) {
    sink.text(STX + ETX);
    return;
  }
  openRecord(str(message.role), sink);
  writeBlocks(message.content, sink);
  sink.text(ETX);
}

/** Write the canonical prompt of a Messages request body (already JSON-parsed). */
export function writeMessagesPrompt(body: unknown, sink: CanonicalSink): void {
  if (!isObject(body)) return;
  writeToolList(body.tools, sink);
  const system = body.system;
  if (typeof system === "string" || Array.isArray(system)) {
    openRecord("system", sink);
    if (typeof system === "string") sink.text(system);
    else for (const block of system) if (!isBillingHeader(block)) writeBlock(block, sink);
    sink.text(ETX);
  }
  if (Array.isArray(body.messages))
    for (const message of body.messages) writeMessage(message, sink);
}
