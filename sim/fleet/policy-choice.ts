/**
 * A policy as a run names it: its type, its label in the results (`dynamo@tuned`, `cost`) and
 * the parameters it runs with beyond its defaults (tuned ones come from
 * bench/sim/capacity/tuned.ts).
 */
import type { PolicyType } from "../../src/core/policies/index.ts";

export interface PolicyChoice {
  policy: PolicyType;
  label: string;
  params: Record<string, unknown>;
}

/** A policy at its defaults. */
export function choiceOf(p: PolicyType | PolicyChoice): PolicyChoice {
  return typeof p === "string" ? { policy: p, label: p, params: {} } : p;
}
