/**
 * Selection helpers shared by the policies: the minimum under an order with seeded random
 * tie-breaks (as llm-d's max-score picker and Dynamo's selector do, so an idle fleet does not
 * pile onto the first origin), and a full preference order for failover.
 */
import type { Rng } from "../rng.ts";

export type Compare = (a: number, b: number) => number;

/** The least candidate under `compare`; ties broken uniformly at random. -1 if none. */
export function pickMin(candidates: readonly number[], compare: Compare, rng: Rng): number {
  let best = -1;
  let ties = 0;
  for (const i of candidates) {
    const c = best < 0 ? -1 : compare(i, best);
    if (c < 0) {
      best = i;
      ties = 1;
    } else if (c === 0 && rng.int(++ties) === 0) {
      best = i;
    }
  }
  return best;
}

/** The candidate with the least key (each key computed once); ties at random. -1 if none. */
export function argmin(
  candidates: readonly number[],
  key: (i: number) => number,
  rng: Rng,
): number {
  let best = -1;
  let bestKey = Number.POSITIVE_INFINITY;
  let ties = 0;
  for (const i of candidates) {
    const k = key(i);
    if (best < 0 || k < bestKey) {
      best = i;
      bestKey = k;
      ties = 1;
    } else if (k === bestKey && rng.int(++ties) === 0) {
      best = i;
    }
  }
  return best;
}

/** Candidates in ascending order (stable for ties). */
export function rankBy(candidates: readonly number[], key: (i: number) => number): number[] {
  return rankWith(candidates, (a, b) => key(a) - key(b));
}

export function rankWith(candidates: readonly number[], compare: Compare): number[] {
  return [...candidates].sort(compare);
}
