/**
 * Azure LLM inference traces 2023 (Azure/AzurePublicDataset, CC-BY-4.0; Patel et al.,
 * Splitwise, ISCA 2024): CSV `TIMESTAMP,ContextTokens,GeneratedTokens` with wall-clock
 * timestamps like `2023-11-16 18:17:03.9799600`. They carry no prefix information, so every
 * request gets block ids of its own: the no-sharing workload. Timestamps become milliseconds
 * from the first row (parsed by hand: Date.parse would drop the 7th fractional digit and is
 * locale-dependent without a zone).
 */
import { countField, type Trace, TraceFormatError, type TraceRecord } from "./trace.ts";

/** Azure rows have no ids; each request's prompt is cut into blocks of this many tokens. */
const AZURE_BLOCK_TOKENS = 512;

const STAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;

/** [whole milliseconds since the epoch, fraction in ms]: kept apart so no precision is lost. */
function parseStamp(text: string, source: string, line: number): [number, number] {
  const m = STAMP.exec(text);
  if (!m) throw new TraceFormatError(source, line, `bad TIMESTAMP ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac = ""] = m;
  const whole = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return [whole, Number(`0.${frac || "0"}`) * 1000];
}

export function parseAzure(text: string, name: string): Trace {
  const lines = text.split("\n");
  const header = (lines[0] ?? "").trim();
  if (header !== "TIMESTAMP,ContextTokens,GeneratedTokens") {
    throw new TraceFormatError(name, 1, `expected header TIMESTAMP,ContextTokens,GeneratedTokens`);
  }
  const records: TraceRecord[] = [];
  let first: [number, number] | null = null;
  let previous = Number.NEGATIVE_INFINITY;
  let nextId = 0;
  for (let i = 1; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === "") continue;
    const line = i + 1;
    const cells = raw.split(",");
    if (cells.length !== 3) {
      throw new TraceFormatError(name, line, `expected 3 columns, got ${cells.length}`);
    }
    const stamp = parseStamp(cells[0] as string, name, line);
    first ??= stamp;
    const at = stamp[0] - first[0] + (stamp[1] - first[1]);
    const int = (cell: string, field: string) =>
      countField(/^\d+$/.test(cell) ? Number(cell) : cell, field, name, line);
    const inputTokens = int(cells[1] as string, "ContextTokens");
    const outputTokens = int(cells[2] as string, "GeneratedTokens");
    if (at < previous) throw new TraceFormatError(name, line, "TIMESTAMP goes back in time");
    previous = at;
    const blocks = Math.ceil(inputTokens / AZURE_BLOCK_TOKENS);
    const blockIds = Array.from({ length: blocks }, () => nextId++);
    records.push({ timestampMs: at, inputTokens, outputTokens, blockIds });
  }
  return { name, blockTokens: AZURE_BLOCK_TOKENS, records };
}
