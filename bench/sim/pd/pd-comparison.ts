/**
 * The P/D comparison of `npm run bench:pd`: one workload replayed on an aggregated fleet and on
 * a P/D fleet of the same GPU count in each disaggregation mode, each over several seeds, every
 * policy asked for. Replays run two at a time (the machine has 2 cores), each in its own worker
 * thread; results come back in a fixed order, so one set of seeds gives byte-identical JSON.
 */

import type { DisaggregationMode, PdFleet } from "../../../sim/fleet/pd-fleet.ts";
import type { BenchResult } from "../../../sim/fleet/result-types.ts";
import { type BenchSpec, runBenchmark } from "../../../sim/fleet/runner.ts";
import type { PolicyType } from "../../../src/core/policies/index.ts";

export type FleetName = "aggregated" | DisaggregationMode;

export interface PdRun {
  fleet: FleetName;
  seed: number;
  result: BenchResult;
}

export interface PdComparison {
  /** The P/D split every P/D run used; the aggregated runs use prefill + decode origins. */
  prefill: number;
  decode: number;
  seeds: number[];
  fleets: FleetName[];
  runs: PdRun[];
}

/** The spec of one fleet: aggregated, or `fleet`'s split in that mode. */
function fleetSpec(spec: BenchSpec, pd: PdFleet, fleet: FleetName, seed: number): BenchSpec {
  const origins = pd.prefill + pd.decode;
  const split =
    fleet === "aggregated"
      ? null
      : { ...pd, mode: fleet, rule: fleet === "conditional" ? pd.rule : undefined };
  return { ...spec, origins, seed, pd: split };
}

export async function runPdComparison(
  spec: BenchSpec,
  pd: PdFleet,
  policies: readonly PolicyType[],
  options: {
    seeds: readonly number[];
    modes: readonly DisaggregationMode[];
    concurrency: number;
    onRun?: (run: PdRun) => void;
  },
): Promise<PdComparison> {
  const fleets: FleetName[] = ["aggregated", ...options.modes];
  const tasks = options.seeds.flatMap((seed) => fleets.map((fleet) => ({ fleet, seed })));
  const runs: PdRun[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const k = next++;
      const { fleet, seed } = tasks[k] as { fleet: FleetName; seed: number };
      const result = await runBenchmark(fleetSpec(spec, pd, fleet, seed), policies, { threads: 1 });
      runs[k] = { fleet, seed, result };
      options.onRun?.(runs[k] as PdRun);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  return { prefill: pd.prefill, decode: pd.decode, seeds: [...options.seeds], fleets, runs };
}
