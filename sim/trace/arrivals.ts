/**
 * Arrival times of a replay: how ties are replayed and how fast the trace is played.
 *
 * Ties: Mooncake's conversation trace stamps requests on ~3 s ticks (1,180 distinct timestamps
 * for 12,031 requests, research/traces.md section 2), an artefact of its recording, not ten
 * users pressing enter in the same millisecond. "jitter" (the benchmark's default) places the
 * requests of one tick at seeded uniform random times over the gap to the next tick (the last
 * tick over the mean gap), sorted, keeping their order: given only a count per tick, that is what
 * a Poisson process looks like inside the tick (k Poisson arrivals in an interval are k sorted
 * uniform times), and the seed is what makes several seeds of one recorded trace differ.
 * "spread" places them evenly instead (more regular than real arrivals); "burst" replays the
 * stamps as recorded. A trace without ties (Azure's 100 ns stamps) is the same in every mode.
 *
 * Load: `--load X` scales time so the offered prefill work, as if nothing were cached, is X times
 * what the fleet can prefill: the sum over requests of the profile's time to prefill the whole
 * prompt (attention included), divided by origins x the replay's span.
 */
import { createRng } from "../../src/core/rng.ts";
import { prefillMs } from "../engine/iteration-time.ts";
import type { EngineProfile } from "../engine/profiles.ts";

export type ArrivalMode = "jitter" | "spread" | "burst";
export const ARRIVAL_MODES: readonly ArrivalMode[] = ["jitter", "spread", "burst"];

/** Timestamps (non-decreasing) with each run of equal stamps spread evenly up to the next stamp. */
export function spreadTies(stamps: readonly number[]): number[] {
  return placeTies(stamps, (k, count) => k / count);
}

/**
 * Timestamps (non-decreasing) with each run of equal stamps placed at sorted seeded uniform
 * offsets up to the next stamp. The first of a run keeps the stamp, as in `spreadTies`, so the
 * replay's span (and the time scale `--load` picks) moves by at most one gap between seeds.
 */
export function jitterTies(stamps: readonly number[], seed: number): number[] {
  const rng = createRng(seed);
  let offsets: number[] = [];
  return placeTies(stamps, (k, count) => {
    if (k === 0) {
      offsets = Array.from({ length: count - 1 }, () => rng.next()).sort((a, b) => a - b);
      return 0;
    }
    return offsets[k - 1] as number;
  });
}

/** Arrival times of `mode`: the ties of the recorded stamps replaced as the mode says. */
export function arrivalTimes(stamps: readonly number[], mode: ArrivalMode, seed: number): number[] {
  switch (mode) {
    case "jitter":
      return jitterTies(stamps, seed);
    case "spread":
      return spreadTies(stamps);
    case "burst":
      return [...stamps];
  }
}

/**
 * Each run of equal stamps t (requests i..j-1) moved to t + at(k, j - i) * gap, where gap is
 * the distance to the next stamp (the mean gap for the last run) and at(k, n) is in [0, 1),
 * non-decreasing in k.
 */
function placeTies(stamps: readonly number[], at: (k: number, count: number) => number): number[] {
  const out = [...stamps];
  const distinct = new Set(stamps).size;
  const span = (stamps.at(-1) ?? 0) - (stamps[0] ?? 0);
  const meanGap = distinct > 1 ? span / (distinct - 1) : 0;
  for (let i = 0; i < out.length; ) {
    let j = i + 1;
    while (j < out.length && stamps[j] === stamps[i]) j++;
    const t = stamps[i] as number;
    const gap = j < stamps.length ? (stamps[j] as number) - t : meanGap;
    for (let k = i; k < j; k++) out[k] = t + at(k - i, j - i) * gap;
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
