import { describe, expect, it } from "vitest";
import { createRng } from "../rng.ts";
import { CENSUS_STANDARD_ERROR, IsolateCensus, WINDOW_MS, WINDOWS } from "./isolate-census.ts";
import { ISOLATE_ID_BYTES, isolateId } from "./isolate-id.ts";

/** n isolate ids as the Worker draws them, from a fixed seed (so the test is deterministic). */
function ids(n: number, seed: number): string[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, () =>
    isolateId(Uint8Array.from({ length: ISOLATE_ID_BYTES }, () => rng.int(256))),
  );
}

describe("IsolateCensus", () => {
  it("counts a few isolates exactly, however often each syncs", () => {
    const census = new IsolateCensus();
    const few = ids(7, 1);
    for (let t = 0; t < 60_000; t += 100) census.see(few[(t / 100) % 7] as string, t);
    expect(census.count(60_000)).toMatchObject({ sinceStart: 7, lastHour: 7 });
    expect(new IsolateCensus().count(0)).toMatchObject({ sinceStart: 0, lastHour: 0 });
  });

  it("estimates thousands within four standard errors (fixed seeds: the same ids every run)", () => {
    for (const [n, seed] of [
      [50, 2],
      [500, 3],
      [5_000, 4],
      [50_000, 5],
    ] as const) {
      const census = new IsolateCensus();
      for (const id of ids(n, seed)) census.see(id, 1000);
      const { sinceStart, lastHour, standardError } = census.count(1000);
      expect(standardError).toBe(CENSUS_STANDARD_ERROR);
      expect(Math.abs(sinceStart - n) / n).toBeLessThan(4 * CENSUS_STANDARD_ERROR);
      expect(lastHour).toBe(sinceStart);
    }
  });

  it("forgets isolates last heard from over an hour ago in `lastHour`, never in `sinceStart`", () => {
    const census = new IsolateCensus();
    const early = ids(40, 6);
    const late = ids(10, 7);
    for (const id of early) census.see(id, 0);
    for (const id of late) census.see(id, 30 * 60_000);
    expect(census.count(30 * 60_000)).toMatchObject({ sinceStart: 50, lastHour: 50 });
    // The early window leaves the hour once WINDOWS later windows have begun.
    const later = WINDOWS * WINDOW_MS;
    expect(census.count(later)).toMatchObject({ sinceStart: 50, lastHour: 10 });
    for (const id of late) census.see(id, later + 1);
    expect(census.count(later + 1)).toMatchObject({ sinceStart: 50, lastHour: 10 });
    expect(census.count(later + 2 * WINDOWS * WINDOW_MS).lastHour).toBe(0);
  });
});
