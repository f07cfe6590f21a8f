/**
 * A request trace in the one shape every loader and generator produces: arrivals with prompt
 * and output lengths, and the prompt as a sequence of abstract block ids. Equal id prefixes mean
 * equal prompt prefixes (Mooncake's chained `hash_ids`); ids never shared mean no sharing.
 */
export interface TraceRecord {
  /** Arrival, milliseconds from the trace's start. */
  readonly timestampMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** One id per `blockTokens` tokens of prompt; the last block may be partial. */
  readonly blockIds: readonly number[];
}

export interface Trace {
  readonly name: string;
  /** Tokens per block id (512 in Mooncake's traces). */
  readonly blockTokens: number;
  readonly records: readonly TraceRecord[];
}

/** A malformed input line; `line` is 1-based. */
export class TraceFormatError extends Error {
  readonly line: number;
  constructor(source: string, line: number, reason: string) {
    super(`${source}:${line}: ${reason}`);
    this.name = "TraceFormatError";
    this.line = line;
  }
}

/** A non-negative integer field, or a TraceFormatError naming it. */
export function countField(value: unknown, field: string, source: string, line: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new TraceFormatError(
      source,
      line,
      `${field} must be a non-negative integer, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
