/**
 * Turns trace records into timed chat requests for the local stack. Arrival order and relative
 * gaps come from the trace (requests on one of Mooncake's 3 s ticks are spread over the tick, as
 * the benchmark does); the whole span is scaled so the offered prefill work (as if nothing were
 * cached) is `load` times what the engines can prefill, in wall-clock terms. Real CPU engines
 * get shorter prompts (`bytesPerBlock`, prompt-text.ts) and count a token per byte
 * (`bytesPerToken` 1: the project's llama.cpp models); the work is the text's tokens.
 */

import { spreadTies } from "../../sim/trace/arrivals.ts";
import type { TraceRecord } from "../../sim/trace/trace.ts";
import { BYTES_PER_TOKEN } from "../../src/core/chunk-hash.ts";
import { promptText } from "./prompt-text.ts";
import type { ReplayRequest } from "./replay.ts";

export interface ScheduleOptions {
  model: string;
  load: number;
  /** Prefill tokens per wall-clock second the whole fleet can do. */
  fleetTokensPerSecond: number;
  maxTokens: number;
  /** Text per 512-token trace block (prompt-text.ts); default 2,048 bytes (4 per token). */
  bytesPerBlock?: number;
  /** Bytes per engine token, for the work; default the router's estimate, 4. */
  bytesPerToken?: number;
  /** Cut prompts to this many bytes (their prefixes stay shared); default no cut. */
  maxPromptBytes?: number;
}

export function schedule(records: readonly TraceRecord[], o: ScheduleOptions): ReplayRequest[] {
  if (records.length === 0) return [];
  const stamps = spreadTies(records.map((r) => r.timestampMs));
  const first = stamps[0] as number;
  const span = Math.max(1, (stamps.at(-1) as number) - first);
  const texts = records.map((r) =>
    promptText(r.blockIds, r.inputTokens, o.bytesPerBlock).slice(0, o.maxPromptBytes),
  );
  const bytes = texts.reduce((s, t) => s + t.length, 0);
  const tokens = bytes / (o.bytesPerToken ?? BYTES_PER_TOKEN);
  const durationMs = (1000 * tokens) / (o.fleetTokensPerSecond * o.load);
  return records.map((r, i) => ({
    atMs: (((stamps[i] as number) - first) / span) * durationMs,
    model: o.model,
    text: texts[i] as string,
    maxTokens: Math.max(1, Math.min(r.outputTokens, o.maxTokens)),
  }));
}
