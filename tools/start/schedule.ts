/**
 * Turns trace records into timed chat requests for the local stack. Arrival order and relative
 * gaps come from the trace (requests on one of Mooncake's 3 s ticks are spread over the tick, as
 * the benchmark does); the whole span is scaled so the offered prefill work (as if nothing were
 * cached) is `load` times what the engines can prefill, in wall-clock terms.
 */

import { spreadTies } from "../../sim/trace/arrivals.ts";
import type { TraceRecord } from "../../sim/trace/trace.ts";
import { promptText } from "../replay/prompt-text.ts";
import type { ReplayRequest } from "../replay/replay.ts";

export interface ScheduleOptions {
  model: string;
  load: number;
  /** Prefill tokens per wall-clock second the whole fleet can do. */
  fleetTokensPerSecond: number;
  maxTokens: number;
}

export function schedule(records: readonly TraceRecord[], o: ScheduleOptions): ReplayRequest[] {
  if (records.length === 0) return [];
  const stamps = spreadTies(records.map((r) => r.timestampMs));
  const first = stamps[0] as number;
  const span = Math.max(1, (stamps.at(-1) as number) - first);
  const tokens = records.reduce((s, r) => s + r.inputTokens, 0);
  const durationMs = (1000 * tokens) / (o.fleetTokensPerSecond * o.load);
  return records.map((r, i) => ({
    atMs: (((stamps[i] as number) - first) / span) * durationMs,
    model: o.model,
    text: promptText(r.blockIds, r.inputTokens),
    maxTokens: Math.max(1, Math.min(r.outputTokens, o.maxTokens)),
  }));
}
