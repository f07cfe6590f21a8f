/**
 * Arrival times of a replay: how ties are replayed and how fast the trace is played.
 *
 * Ties: Mooncake's conversation trace stamps requests on ~3 s ticks (1,180 distinct timestamps
 * for 12,031 requests, research/traces.md section 2), an artefact of its recording, not ten
 * users pressing enter in the same millisecond. "spread" places the requests of one tick evenly
 * over the gap to the next tick (the last tick over the mean gap), keeping their order; "burst"
 * replays the stamps as recorded.
 *
 * Load: `--load X` scales time so the offered prefill work, as if nothing were cached, is X times
 * what the fleet can prefill: the sum over requests of the profile's time to prefill the whole
 * prompt (attention included), divided by origins x the replay's span.
 */
import { prefillMs } from "../engine/iteration-time.ts";
import type { EngineProfile } from "../engine/profiles.ts";

export type ArrivalMode = "spread" | "burst";

/** Timestamps (non-decreasing) with each run of equal stamps spread up to the next stamp. */
export function spreadTies(stamps: readonly number[]): number[] {
  const out = [...stamps];
  const distinct = new Set(stamps).size;
  const span = (stamps.at(-1) ?? 0) - (stamps[0] ?? 0);
  const meanGap = distinct > 1 ? span / (distinct - 1) : 0;
  for (let i = 0; i < out.length; ) {
    let j = i + 1;
    while (j < out.length && stamps[j] === stamps[i]) j++;
    const t = stamps[i] as number;
    const gap = j < stamps.length ? (stamps[j] as number) - t : meanGap;
    for (let k = i; k < j; k++) out[k] = t + ((k - i) * gap) / (j - i);
    i = j;
  }
  return out;
}

/** Simulated milliseconds per trace millisecond for the requested load (1 if the span is 0). */
export function loadScale(
  stamps: readonly number[],
  promptTokens: readonly number[],
  profile: EngineProfile,
  origins: number,
  load: number,
): number {
  const span = (stamps.at(-1) ?? 0) - (stamps[0] ?? 0);
  if (span <= 0) return 1;
  let workMs = 0;
  for (const tokens of promptTokens) workMs += prefillMs(profile, 0, tokens);
  return workMs / (load * origins * span);
}
