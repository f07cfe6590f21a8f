/**
 * The overload benchmark's cases (`npm run bench:overload`; bench/sim/README.md, "Overload"):
 * tenant mixes, each at its loads with admission off (the baseline: every request routed at
 * once, as before admission existed) and on (the pool's settings below).
 *
 * - `one-key`: one interactive key, load 1.0, 1.5 and 2.0: goodput, admitted TTFT and shedding
 *   as the load passes capacity.
 * - `priorities`: half the requests interactive, half batch (two keys), load 1.5: batch absorbs
 *   the excess.
 * - `two-keys`: two interactive keys each offering the pool's full capacity (load 2.0): each
 *   should get half the goodput.
 * - `tenants`: four keys of unequal shares over both priorities, load 1.5: fairness within each
 *   priority (Jain's index over max-min fair shares).
 */
import type { AdmissionSettings } from "../../../src/core/settings/admission-settings.ts";
import type { OverloadCase } from "./overload-run.ts";
import type { Tenant } from "./tenants.ts";

/**
 * The pool's admission in the benchmark: the defaults (docs/api.md). 500 ms of estimated wait
 * and 500 ms at the router keep admitted requests within the 2 s objective with room for the
 * engine's own prefill.
 */
export const ADMISSION: AdmissionSettings = {
  maxWaitMs: 500,
  queueTimeoutMs: 500,
  maxQueued: 1000,
};

const MIXES: Record<string, { tenants: Tenant[]; loads: number[] }> = {
  "one-key": { tenants: [{ key: "a", priority: "interactive", share: 1 }], loads: [1, 1.5, 2] },
  priorities: {
    tenants: [
      { key: "chat", priority: "interactive", share: 0.5 },
      { key: "jobs", priority: "batch", share: 0.5 },
    ],
    loads: [1.5],
  },
  "two-keys": {
    tenants: [
      { key: "a", priority: "interactive", share: 0.5 },
      { key: "b", priority: "interactive", share: 0.5 },
    ],
    loads: [2],
  },
  tenants: {
    tenants: [
      { key: "chat-1", priority: "interactive", share: 0.3 },
      { key: "chat-2", priority: "interactive", share: 0.15 },
      { key: "jobs-1", priority: "batch", share: 0.4 },
      { key: "jobs-2", priority: "batch", share: 0.15 },
    ],
    loads: [1.5],
  },
};

export const SCENARIOS = Object.keys(MIXES);

/** Every case of `scenarios`, each load with admission off then on. */
export function overloadCases(scenarios: readonly string[] = SCENARIOS): OverloadCase[] {
  return scenarios.flatMap((scenario) => {
    const mix = MIXES[scenario];
    if (!mix) throw new Error(`unknown scenario "${scenario}"; known: ${SCENARIOS.join(", ")}`);
    return mix.loads.flatMap((load) =>
      [null, ADMISSION].map((admission) => ({ scenario, tenants: mix.tenants, load, admission })),
    );
  });
}
