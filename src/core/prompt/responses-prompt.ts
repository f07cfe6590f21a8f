/**
 * Canonical text of an OpenAI Responses request (`POST /v1/responses`): what the engine will
 * tokenise, in the order it renders it. vLLM and llama.cpp turn `instructions` into a system
 * message and the `input` items into chat turns, then render them with the model's chat
 * template, so this follows chat's canonicaliser (`canonical-prompt.ts`) record for record:
 *
 * - `tools` (if any): one record, as chat's. Chat and Messages write tools before the system
 *   prompt, and so does this (rather than `instructions` first): the order of two records that
 *   never change within a session does not matter to the prefix property, and keeping one order
 *   lets the same conversation hash alike through every API;
 * - `instructions` (a string): a `system` record, as chat's system message;
 * - `input`: a string is one user message; an array holds items: messages (`type: "message"`, or
 *   no type and a role) as `STX role RS content ETX`, their content a string or parts
 *   (`input_text`, `output_text` and the reasoning texts as their text, `refusal` as the refusal,
 *   `input_image`, `input_file` and `input_audio` tagged with their URL, data or file id, any
 *   other part tagged with its type and its JSON); `function_call` and `custom_tool_call` as an
 *   assistant record holding a tool call (name, then arguments), as chat renders `tool_calls`;
 *   `function_call_output` and `custom_tool_call_output` as a `tool` record, as chat's tool
 *   messages; `reasoning` as a record of its summary and content texts and its encrypted
 *   content; any other item as a record named by its type holding its JSON.
 *
 * So a text-only conversation renders to the same bytes as the same conversation sent to
 * `/v1/chat/completions` or `/v1/messages`, and hashes alike under one model (the engine, too,
 * serves the APIs from one prompt cache). Every other field (`store`, `stream`, `temperature`,
 * `max_output_tokens`, `metadata`, `reasoning` settings, item ids and statuses, call ids...) is
 * left out. Prefix property: appending items (the assistant's output and the next user message,
 * or a function call and its output) renders to text of which the earlier request's is a prefix.
 *
 * `previous_response_id`: a follow-up sends only its new items, the engine prepending the stored
 * conversation it alone holds. Its key covers only what the request carries (the stored
 * conversation is not the router's to read); the Worker pins such a request to the origin that
 * stored the response, whatever its key says, so the key serves only the index's learning.
 * `conversation` (a server-side conversation id) is the same case.
 *
 * Wrong types never throw: a field of the wrong type renders as empty, an item that is not an
 * object as an empty record, as chat's canonicaliser does; the Worker's validation decides what
 * is a 400. Cost is linear in the body, written piece by piece to the sink; `tools` and unknown
 * parts and items go through JSON.stringify, linear because the Worker bounds the body's nesting
 * depth before parsing it (`src/worker/validation/json-budget.ts`).
 */
import type { CanonicalSink } from "./framing.ts";
import {
  ETX,
  isObject,
  type Json,
  openRecord,
  STX,
  str,
  writeCall,
  writeTagged,
  writeToolList,
} from "./framing.ts";

function writePart(part: unknown, sink: CanonicalSink): void {
  if (typeof part === "string") {
    sink.text(part);
    return;
  }
  if (!isObject(part)) return;
  const type = str(part.type);
  switch (type) {
    case "input_text":
    case "output_text":
    case "text":
    case "summary_text":
    case "reasoning_text":
      sink.text(str(part.text));
      return;
    case "refusal":
      sink.text(str(part.refusal));
      return;
    case "input_image":
      writeTagged("image", str(part.image_url) || str(part.file_id), sink);
      return;
    case "input_file":
      writeTagged("file", str(part.file_id) || str(part.file_data) || str(part.file_url), sink);
      return;
    case "input_audio": {
      const audio = part.input_audio;
      writeTagged("audio", isObject(audio) ? str(audio.data) : "", sink);
      return;
    }
    default:
      writeTagged(type, JSON.stringify(part), sink);
  }
}

/** Content or output: a string, or an array of parts. */
function writeParts(content: unknown, sink: CanonicalSink): void {
  if (typeof content === "string") sink.text(content);
  else if (Array.isArray(content)) for (const part of content) writePart(part, sink);
}

function writeReasoning(item: Json, sink: CanonicalSink): void {
  openRecord("reasoning", sink);
  writeParts(item.summary, sink);
  writeParts(item.content, sink);
  if (typeof item.encrypted_content === "string") {
    writeTagged("encrypted", item.encrypted_content, sink);
  }
  sink.text(ETX);
}

function writeItem(item: unknown, sink: CanonicalSink): void {
  if (!isObject(item)) {
    sink.text(STX + ETX);
    return;
  }
  const type = str(item.type);
  switch (type) {
    case "function_call":
    case "custom_tool_call":
      openRecord("assistant", sink);
      writeCall(str(item.name), str(type === "function_call" ? item.arguments : item.input), sink);
      sink.text(ETX);
      return;
    case "function_call_output":
    case "custom_tool_call_output":
      openRecord("tool", sink);
      writeParts(item.output, sink);
      sink.text(ETX);
      return;
    case "reasoning":
      writeReasoning(item, sink);
      return;
    default:
      if (type === "message" || (type === "" && item.role !== undefined)) {
        openRecord(str(item.role), sink);
        writeParts(item.content, sink);
      } else {
        openRecord(type, sink);
        sink.text(JSON.stringify(item));
      }
      sink.text(ETX);
  }
}

/** Write the canonical prompt of a Responses request body (already JSON-parsed). */
export function writeResponsesPrompt(body: unknown, sink: CanonicalSink): void {
  if (!isObject(body)) return;
  writeToolList(body.tools, sink);
  if (typeof body.instructions === "string") {
    openRecord("system", sink);
    sink.text(body.instructions);
    sink.text(ETX);
  }
  const input = body.input;
  if (typeof input === "string") {
    openRecord("user", sink);
    sink.text(input);
    sink.text(ETX);
  } else if (Array.isArray(input)) {
    for (const item of input) writeItem(item, sink);
  }
}
