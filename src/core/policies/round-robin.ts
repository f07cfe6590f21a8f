/**
 * round-robin: each request goes to the next eligible origin in settings order.
 *
 * Algorithm: a cursor over the pool's origins; skip ineligible ones. O(n) worst case per request.
 * Parameters: none. Cache-blind: with N origins a repeated prefix finds its cache 1/N of the time,
 * which is the baseline every cache-aware policy must beat.
 */
import { z } from "zod";
import { overEligible, type Policy } from "./policy.ts";

export const roundRobinParams = z.object({ type: z.literal("round-robin") }).strict();

export function createRoundRobin(): Policy {
  let cursor = 0;
  return overEligible("round-robin", ({ origins }, eligible) => {
    // The first eligible origin at or after the cursor, in settings order, then the rest.
    const at = Math.max(
      0,
      eligible.findIndex((i) => i >= cursor),
    );
    const ranking = [...eligible.slice(at), ...eligible.slice(0, at)];
    const origin = ranking[0] as number;
    cursor = (origin + 1) % origins.length;
    return { origin, reason: "round-robin", ranking };
  });
}
