/**
 * Canonical text of an OpenAI request's prompt: what the engine will tokenise, in the order it
 * will see it, with nothing else.
 *
 * Chat: `tools` (if any), then each message in order: role, name, content (a string or an array
 * of parts), tool calls, tool results. Completions: the prompt (a string, an array of strings,
 * or token ids). Every other field (temperature, stream, user, ids of tool calls...) is left out,
 * so it cannot change the bytes.
 *
 * Prefix property: a message is rendered as a self-contained record (`framing.ts`: STX role US
 * name RS content ETX), and a completion prompt has no terminator, so a request that appends
 * messages (or extends the prompt) renders to text of which the original is a prefix, just as the
 * engine's chat template renders to a token prefix. Anthropic Messages and OpenAI Responses
 * bodies have their own canonicalisers in the same framing (`messages-prompt.ts`,
 * `responses-prompt.ts`); `prompt-key.ts` picks one by API.
 *
 * The text is written piece by piece to a sink (`chunk-writer.ts` encodes and hashes it as it
 * comes), never joined: a prompt of hundreds of KB concatenated into one string must be
 * flattened before encoding, which measured 7x slower, and a 16 MB prompt of token ids would be
 * millions of small strings. Each field is visited once, so the cost is linear in the body;
 * `tools` and unknown content parts are stringified whole by JSON.stringify, which is linear
 * only because the Worker bounds the body's nesting depth before parsing it
 * (`src/worker/validation/json-budget.ts`).
 */

import {
  type CanonicalSink,
  ETX,
  isObject,
  RS,
  STX,
  str,
  US,
  writeCall,
  writeTagged,
} from "./framing.ts";

const TOOLS = `${STX}tools${RS}`;
const PROMPT = `${STX}prompt${RS}`;

/** One content part. Known OpenAI part types keep only what the model sees. */
function writePart(part: unknown, sink: CanonicalSink): void {
  if (typeof part === "string") {
    sink.text(part);
    return;
  }
  if (!isObject(part)) return;
  const type = str(part.type);
  switch (type) {
    case "text":
    case "input_text":
    case "output_text":
      sink.text(str(part.text));
      return;
    case "refusal":
      sink.text(str(part.refusal));
      return;
    case "image_url": {
      const image = part.image_url;
      writeTagged("image", isObject(image) ? str(image.url) : str(image), sink);
      return;
    }
    case "input_audio": {
      const audio = part.input_audio;
      writeTagged("audio", isObject(audio) ? str(audio.data) : "", sink);
      return;
    }
    case "file": {
      const file = part.file;
      writeTagged("file", isObject(file) ? str(file.file_id) || str(file.file_data) : "", sink);
      return;
    }
    default: {
      // The part's own field only: `type` may be "constructor" or "toString", whose inherited
      // values JSON.stringify turns into undefined.
      const value: unknown = Object.getOwnPropertyDescriptor(part, type)?.value;
      writeTagged(type, JSON.stringify(value ?? null), sink);
    }
  }
}

function writeContent(content: unknown, sink: CanonicalSink): void {
  if (typeof content === "string") sink.text(content);
  else if (Array.isArray(content)) for (const part of content) writePart(part, sink);
}

function writeFunction(fn: unknown, sink: CanonicalSink): void {
  const call = isObject(fn) ? fn : {};
  writeCall(str(call.name), str(call.arguments), sink);
}

function writeMessage(message: unknown, sink: CanonicalSink): void {
  if (!isObject(message)) {
    sink.text(STX + ETX);
    return;
  }
  sink.text(STX);
  sink.text(str(message.role));
  if (typeof message.name === "string") {
    sink.text(US);
    sink.text(message.name);
  }
  sink.text(RS);
  writeContent(message.content, sink);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) if (isObject(call)) writeFunction(call.function, sink);
  }
  if (isObject(message.function_call)) writeFunction(message.function_call, sink);
  sink.text(ETX);
}

/**
 * A completion prompt: a string, strings, token ids, or lists of token ids (records after the
 * first separated by RS). Deeper nesting, which the API does not allow, is ignored.
 */
function writePrompt(prompt: unknown, sink: CanonicalSink): void {
  if (typeof prompt === "string") {
    sink.text(prompt);
    return;
  }
  if (!Array.isArray(prompt)) return;
  for (let i = 0; i < prompt.length; i++) {
    const item = prompt[i];
    if (typeof item === "number") sink.tokenId(item);
    else if (typeof item === "string") {
      if (i > 0) sink.text(RS);
      sink.text(item);
    } else if (Array.isArray(item)) {
      if (i > 0) sink.text(RS);
      for (const id of item) if (typeof id === "number") sink.tokenId(id);
    }
  }
}

/** Write the canonical prompt of a chat or completions request body (already JSON-parsed). */
export function writeCanonicalPrompt(body: unknown, sink: CanonicalSink): void {
  if (!isObject(body)) return;
  if (Array.isArray(body.messages)) {
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      sink.text(TOOLS);
      sink.text(JSON.stringify(body.tools));
      sink.text(ETX);
    }
    for (const message of body.messages) writeMessage(message, sink);
  } else {
    sink.text(PROMPT);
    writePrompt(body.prompt, sink);
  }
}

/** The canonical prompt text of a chat or completions request body (tests, documentation). */
export function canonicalPrompt(body: unknown): string {
  const pieces: string[] = [];
  writeCanonicalPrompt(body, {
    text: (value) => pieces.push(value),
    tokenId: (id) => pieces.push(`${id},`),
  });
  return pieces.join("");
}
