/**
 * least-outstanding: the eligible origin with the fewest requests in flight, per unit of weight.
 *
 * Algorithm: argmin of outstanding / weight, ties broken at random. O(n). Parameters: none.
 * Uses only the router's own accounting, which is exact for traffic through this router and
 * instant (no report delay). Cache-blind.
 */
import { z } from "zod";
import { argmin, rankBy } from "./pick.ts";
import {
  type Decision,
  eligibleIndexes,
  NO_ELIGIBLE_ORIGIN,
  type Policy,
  type PolicyContext,
} from "./policy.ts";

export const leastOutstandingParams = z.object({ type: z.literal("least-outstanding") }).strict();

export function createLeastOutstanding(): Policy {
  return {
    name: "least-outstanding",
    decide({ origins, rng }: PolicyContext): Decision {
      const eligible = eligibleIndexes(origins);
      const load = (i: number) => {
        const o = origins[i];
        return o ? o.outstanding / o.weight : 0;
      };
      const origin = argmin(eligible, load, rng);
      if (origin < 0) return NO_ELIGIBLE_ORIGIN;
      return { origin, reason: "least-outstanding", ranking: rankBy(eligible, load) };
    },
  };
}
