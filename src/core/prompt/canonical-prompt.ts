/**
 * Canonical text of an OpenAI request's prompt: what the engine will tokenise, in the order it
 * will see it, with nothing else.
 *
 * Chat: `tools` (if any), then each message in order: role, name, content (a string or an array
 * of parts), tool calls, tool results. Completions: the prompt (a string, an array of strings,
 * or token ids). Every other field (temperature, stream, user, ids of tool calls...) is left out,
 * so it cannot change the bytes.
 *
 * Prefix property: a message is rendered as a self-contained record, and a completion prompt has
 * no terminator, so a request that appends messages (or extends the prompt) renders to text of
 * which the original is a prefix, just as the engine's chat template renders to a token prefix.
 * Records are framed with ASCII control characters (STX role US name RS content ETX) that real
 * prompts almost never contain; a prompt that does can at worst share a routing key with another,
 * which changes where it runs, never what it returns.
 *
 * The text is produced as a list of pieces rather than one string: a prompt of hundreds of KB
 * concatenated into one string must be flattened (a large-object allocation) before encoding,
 * which measured 7x slower than encoding the pieces, which JSON.parse already made flat.
 */

const STX = "\u0002";
const ETX = "\u0003";
const GS = "\u001d";
const RS = "\u001e";
const US = "\u001f";
const SUB = "\u001a";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** One content part. Known OpenAI part types keep only what the model sees. */
function renderPart(part: unknown): string {
  if (typeof part === "string") return part;
  if (!isObject(part)) return "";
  const type = str(part.type);
  switch (type) {
    case "text":
    case "input_text":
    case "output_text":
      return str(part.text);
    case "refusal":
      return str(part.refusal);
    case "image_url": {
      const image = part.image_url;
      return `${SUB}image${US}${isObject(image) ? str(image.url) : str(image)}${SUB}`;
    }
    case "input_audio": {
      const audio = part.input_audio;
      return `${SUB}audio${US}${isObject(audio) ? str(audio.data) : ""}${SUB}`;
    }
    case "file": {
      const file = part.file;
      const id = isObject(file) ? str(file.file_id) || str(file.file_data) : "";
      return `${SUB}file${US}${id}${SUB}`;
    }
    default:
      return `${SUB}${type}${US}${JSON.stringify(part[type] ?? null)}${SUB}`;
  }
}

function renderContent(content: unknown, out: string[]): void {
  if (typeof content === "string") out.push(content);
  else if (Array.isArray(content)) for (const part of content) out.push(renderPart(part));
}

function renderToolCalls(calls: unknown, out: string[]): void {
  if (!Array.isArray(calls)) return;
  for (const call of calls) {
    if (!isObject(call)) continue;
    const fn = isObject(call.function) ? call.function : {};
    out.push(`${GS}${str(fn.name)}${US}${str(fn.arguments)}`);
  }
}

function renderMessage(message: unknown, out: string[]): void {
  if (!isObject(message)) {
    out.push(STX + ETX);
    return;
  }
  const name = typeof message.name === "string" ? US + message.name : "";
  out.push(`${STX}${str(message.role)}${name}${RS}`);
  renderContent(message.content, out);
  renderToolCalls(message.tool_calls, out);
  const legacy = message.function_call;
  if (isObject(legacy)) out.push(`${GS}${str(legacy.name)}${US}${str(legacy.arguments)}`);
  out.push(ETX);
}

function renderPrompt(prompt: unknown, out: string[]): void {
  if (typeof prompt === "string") {
    out.push(prompt);
    return;
  }
  if (!Array.isArray(prompt)) return;
  for (let i = 0; i < prompt.length; i++) {
    const item = prompt[i];
    if (typeof item === "number") out.push(`${item},`);
    else if (typeof item === "string" || Array.isArray(item)) {
      if (i > 0) out.push(RS);
      renderPrompt(item, out);
    }
  }
}

/** The canonical prompt of a chat or completions request body (already JSON-parsed), in pieces. */
export function canonicalPieces(body: unknown): string[] {
  const out: string[] = [];
  if (!isObject(body)) return out;
  if (Array.isArray(body.messages)) {
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      out.push(`${STX}tools${RS}${JSON.stringify(body.tools)}${ETX}`);
    }
    for (const message of body.messages) renderMessage(message, out);
  } else {
    out.push(`${STX}prompt${RS}`);
    renderPrompt(body.prompt, out);
  }
  return out;
}

/** The canonical prompt text of a chat or completions request body. */
export function canonicalPrompt(body: unknown): string {
  return canonicalPieces(body).join("");
}
