/**
 * random: a uniformly random eligible origin from the seeded rng.
 *
 * Algorithm: one draw over the eligible origins. O(n). Parameters: none. Cache-blind baseline.
 */
import { z } from "zod";
import {
  type Decision,
  eligibleIndexes,
  NO_ELIGIBLE_ORIGIN,
  type Policy,
  type PolicyContext,
} from "./policy.ts";

export const randomParams = z.object({ type: z.literal("random") }).strict();

export function createRandom(): Policy {
  return {
    name: "random",
    decide({ origins, rng }: PolicyContext): Decision {
      const eligible = eligibleIndexes(origins);
      if (eligible.length === 0) return NO_ELIGIBLE_ORIGIN;
      return { origin: eligible[rng.int(eligible.length)] as number, reason: "random" };
    },
  };
}
