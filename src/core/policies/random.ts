/**
 * random: a uniformly random eligible origin from the seeded rng.
 *
 * Algorithm: one draw over the eligible origins. O(n). Parameters: none. Cache-blind baseline.
 */
import { z } from "zod";
import { overEligible, type Policy } from "./policy.ts";

export const randomParams = z.object({ type: z.literal("random") }).strict();

export function createRandom(): Policy {
  return overEligible("random", ({ rng }, eligible) => ({
    origin: eligible[rng.int(eligible.length)] as number,
    reason: "random",
  }));
}
