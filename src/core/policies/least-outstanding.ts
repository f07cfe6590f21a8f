/**
 * least-outstanding: the eligible origin with the fewest requests in flight, per unit of weight.
 *
 * Algorithm: argmin of outstanding / weight, ties broken at random. O(n). Parameters: none.
 * Uses only the router's own accounting, which is exact for traffic through this router and
 * instant (no report delay). Cache-blind.
 */
import { z } from "zod";
import { argmin, rankBy } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const leastOutstandingParams = z.object({ type: z.literal("least-outstanding") }).strict();

export function createLeastOutstanding(): Policy {
  return overEligible("least-outstanding", ({ origins, rng }, eligible) => {
    const load = (i: number) =>
      (origins[i] as OriginView).outstanding / (origins[i] as OriginView).weight;
    return {
      origin: argmin(eligible, load, rng),
      reason: "least-outstanding",
      ranking: rankBy(eligible, load),
    };
  });
}
