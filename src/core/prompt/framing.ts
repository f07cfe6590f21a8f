/**
 * The record framing every canonical prompt shares (chat, completions, Messages, Responses):
 * a message or item is `STX role RS content ETX`, a tool call inside it `GS name US arguments`,
 * a part the model sees as a value (image, file, a type we do not know) `SUB tag US value SUB`.
 * ASCII control characters that real prompts almost never contain, so records cannot run into
 * each other; a prompt that does contain them can at worst share a routing key with another,
 * which changes where it runs, never what it returns. Each record is self-contained, so
 * appending records appends bytes: the prefix property every API's canonicaliser relies on.
 */

/** Receives the canonical text in order. */
export interface CanonicalSink {
  /** Appends text. */
  text(value: string): void;
  /** Appends a token id as `${id},` (decimal digits and a comma). */
  tokenId(id: number): void;
}

export const STX = "\u0002";
export const ETX = "\u0003";
export const GS = "\u001d";
export const RS = "\u001e";
export const US = "\u001f";
export const SUB = "\u001a";

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string field, or "" for anything else (a wrong type never throws, it renders as empty). */
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A part the model sees as a tagged value (image, audio, file, or a type we do not know). */
export function writeTagged(tag: string, value: string, sink: CanonicalSink): void {
  sink.text(SUB);
  sink.text(tag);
  sink.text(US);
  sink.text(value);
  sink.text(SUB);
}

/** Opens a record: STX, its role, RS. The caller writes the content, then ETX. */
export function openRecord(role: string, sink: CanonicalSink): void {
  sink.text(STX);
  sink.text(role);
  sink.text(RS);
}

/** A tool call: its name and its arguments as the model sees them (JSON text). */
export function writeCall(name: string, args: string, sink: CanonicalSink): void {
  sink.text(GS);
  sink.text(name);
  sink.text(US);
  sink.text(args);
}

/**
 * A block as JSON without its `cache_control`: Anthropic clients move that marker to the newest
 * turn on every request (Claude Code does), and a marker is not text the model sees, so keeping
 * it would break the prefix property of the blocks it leaves behind.
 */
export function stringifyBlock(block: Json): string {
  if (!Object.hasOwn(block, "cache_control")) return JSON.stringify(block);
  const { cache_control: _marker, ...rest } = block;
  return JSON.stringify(rest);
}

/**
 * The tools record of a Messages or Responses request: `STX tools RS [tool,...] ETX`, each tool
 * as JSON without its `cache_control` (the same bytes as chat's `JSON.stringify(tools)` when no
 * tool has one). Absent or empty: nothing, as in chat.
 */
export function writeToolList(tools: unknown, sink: CanonicalSink): void {
  if (!Array.isArray(tools) || tools.length === 0) return;
  openRecord("tools", sink);
  sink.text("[");
  for (let i = 0; i < tools.length; i++) {
    if (i > 0) sink.text(",");
    const tool: unknown = tools[i];
    sink.text(isObject(tool) ? stringifyBlock(tool) : (JSON.stringify(tool) ?? "null"));
  }
  sink.text("]");
  sink.text(ETX);
}
