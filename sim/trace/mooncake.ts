/**
 * Mooncake JSONL traces (kvcache-ai/Mooncake FAST25-release/traces): one request per line,
 * `{"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [...]}`, with
 * one chained id per 512-token block (the last block may be partial). Every line is checked;
 * a malformed one is rejected with its line number rather than skipped, so a truncated or
 * edited file cannot silently change the benchmark.
 */
import { countField, type Trace, TraceFormatError, type TraceRecord } from "./trace.ts";

const MOONCAKE_BLOCK_TOKENS = 512;

export function parseMooncake(text: string, name: string): Trace {
  const records: TraceRecord[] = [];
  const lines = text.split("\n");
  let previous = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === "") continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new TraceFormatError(name, line, "not valid JSON");
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new TraceFormatError(name, line, "expected a JSON object");
    }
    const o = value as Record<string, unknown>;
    const timestampMs = countField(o.timestamp, "timestamp", name, line);
    const inputTokens = countField(o.input_length, "input_length", name, line);
    const outputTokens = countField(o.output_length, "output_length", name, line);
    if (!Array.isArray(o.hash_ids)) {
      throw new TraceFormatError(name, line, "hash_ids must be an array");
    }
    const blockIds = o.hash_ids.map((id, k) => countField(id, `hash_ids[${k}]`, name, line));
    const expected = Math.ceil(inputTokens / MOONCAKE_BLOCK_TOKENS);
    if (blockIds.length !== expected) {
      throw new TraceFormatError(
        name,
        line,
        `hash_ids has ${blockIds.length} ids, expected ceil(${inputTokens}/512) = ${expected}`,
      );
    }
    if (timestampMs < previous) {
      throw new TraceFormatError(name, line, `timestamp ${timestampMs} goes back in time`);
    }
    previous = timestampMs;
    records.push({ timestampMs, inputTokens, outputTokens, blockIds });
  }
  return { name, blockTokens: MOONCAKE_BLOCK_TOKENS, records };
}
