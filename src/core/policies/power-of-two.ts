/**
 * power-of-two: sample two distinct eligible origins at random and take the less loaded one
 * (Mitzenmacher's "power of two choices"; SGLang's `power_of_two`).
 *
 * Algorithm: two seeded draws; load is the engine-reported running + waiting when both origins
 * have a fresh report (as SGLang prefers its polled token loads), else the router's outstanding
 * count; `<=` favours the first draw, as in SGLang. O(n) to list the eligible. Parameters: none.
 */
import { z } from "zod";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

export const powerOfTwoParams = z.object({ type: z.literal("power-of-two") }).strict();

function engineLoad(o: OriginView): number {
  return o.engine ? o.engine.running + o.engine.waiting : o.outstanding;
}

export function createPowerOfTwo(): Policy {
  return overEligible("power-of-two", ({ origins, rng }, eligible) => {
    if (eligible.length === 1) return { origin: eligible[0] as number, reason: "only-one" };
    const a = eligible[rng.int(eligible.length)] as number;
    let b = eligible[rng.int(eligible.length - 1)] as number;
    if (b === a) b = eligible[eligible.length - 1] as number;
    const oa = origins[a] as OriginView;
    const ob = origins[b] as OriginView;
    const useEngine = oa.engine !== null && ob.engine !== null;
    const la = (useEngine ? engineLoad(oa) : oa.outstanding) / oa.weight;
    const lb = (useEngine ? engineLoad(ob) : ob.outstanding) / ob.weight;
    const reason = useEngine ? "two-choices-engine" : "two-choices-local";
    return la <= lb
      ? { origin: a, reason, ranking: [a, b] }
      : { origin: b, reason, ranking: [b, a] };
  });
}
