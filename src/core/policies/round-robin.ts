/**
 * round-robin: each request goes to the next eligible origin in settings order.
 *
 * Algorithm: a cursor over the pool's origins; skip ineligible ones. O(n) worst case per request.
 * Parameters: none. Cache-blind: with N origins a repeated prefix finds its cache 1/N of the time,
 * which is the baseline every cache-aware policy must beat.
 */
import { z } from "zod";
import { type Decision, NO_ELIGIBLE_ORIGIN, type Policy, type PolicyContext } from "./policy.ts";

export const roundRobinParams = z.object({ type: z.literal("round-robin") }).strict();

export function createRoundRobin(): Policy {
  let cursor = 0;
  return {
    name: "round-robin",
    decide({ origins }: PolicyContext): Decision {
      const n = origins.length;
      for (let step = 0; step < n; step++) {
        const i = (cursor + step) % n;
        if (origins[i]?.eligible) {
          cursor = (i + 1) % n;
          const ranking = Array.from({ length: n }, (_, k) => (i + k) % n).filter(
            (j) => origins[j]?.eligible,
          );
          return { origin: i, reason: "round-robin", ranking };
        }
      }
      return NO_ELIGIBLE_ORIGIN;
    },
  };
}
