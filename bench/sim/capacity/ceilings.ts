/**
 * The two ceilings a capacity table is read against, so it says how close to the limit each
 * policy runs:
 * - keep-up: `cost`'s capacity with no latency objective (verdict.ts `NO_OBJECTIVE`): the
 *   highest rate at which the fleet still completes what arrives and its queue does not grow.
 * - oracle: the rate at which the fleet's prefill time is fully used if every request missed
 *   only what no policy could have had cached (the infinite-cache oracle's misses,
 *   sim/workload/oracle.ts): requests x origins / the GPU time of those prefills (`prefillMs`,
 *   attention over the cached prefix included), at each origin's nominal speed. Decode time is
 *   left out, so it is an upper bound no router reaches; a policy's capacity / it is its share of
 *   the limit.
 */
import { prefillMs } from "../../../sim/engine/iteration-time.ts";
import { nominalProfile } from "../../../sim/fleet/gpu-fleet.ts";
import type { BenchSpec } from "../../../sim/fleet/runner.ts";
import { infiniteOracleHits } from "../../../sim/workload/oracle.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import type { Spread } from "../report/spread.ts";

type Bounded = Spread & { lo: number; hi: number };

export interface Ceilings {
  /** Null when the run skipped it. */
  keepUp: { policy: string; capacityRps: Bounded } | null;
  oracle: { capacityRps: Bounded };
}

/** Requests/s the fleet's prefill time sustains when each request prefills only the oracle's misses. */
export function oracleCeilingRps(w: Workload, spec: BenchSpec): number {
  const profile = nominalProfile(spec);
  const hits = infiniteOracleHits(w);
  let workMs = 0;
  for (let i = 0; i < w.size; i++) {
    const cached = hits[i] as number;
    workMs += prefillMs(profile, cached, (w.promptTokens[i] as number) - cached);
  }
  return workMs > 0 ? (w.size * spec.origins * 1000) / workMs : 0;
}
