/**
 * One capacity run from the command line: progress on stderr (one line per finished search,
 * wall time there only), then the table and targets on stdout, the JSON and HTML on disk.
 */

import {
  type CoordinationSetup,
  EDGE_STICKINESS,
  EDGE_TOPOLOGY,
} from "../../../sim/edge/coordination.ts";
import { formatFleet } from "../../../sim/fleet/gpu-fleet.ts";
import { toJson, writeFile } from "../../../sim/report/write.ts";
import { type CliOptions, UsageError } from "../args.ts";
import {
  capacityHeader,
  capacityPage,
  capacityTable,
  capacityTargets,
  edgeRatioTable,
} from "./capacity-report.ts";
import { type CapacityResult, runCapacity } from "./capacity-run.ts";
import { ProbePool } from "./probe-pool.ts";
import { parseObjective } from "./verdict.ts";

/** `--slo` parsed, its error as a usage error (printed with the usage, exit 2). */
function objectiveOf(text: string) {
  try {
    return parseObjective(text);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `--coordination`'s modes over bench:edge's default topology and the pool's sync settings. */
function coordinationOf(options: CliOptions): CoordinationSetup[] {
  return options.coordination.map((mode) => ({
    mode,
    topology: { ...EDGE_TOPOLOGY },
    stickiness: { ...EDGE_STICKINESS },
    edge: {},
  }));
}

/** Runs one workload's capacity search on `pool`, printing progress and the results. */
export async function capacityOf(
  options: CliOptions,
  slo: string,
  pool: ProbePool,
): Promise<CapacityResult> {
  const objective = objectiveOf(slo);
  const started = performance.now();
  const { spec, choices, seeds } = options;
  const modes = options.coordination.length > 0 ? ` x ${options.coordination.join(", ")}` : "";
  process.stderr.write(
    `capacity of ${spec.trace} on ${spec.origins} origins ` +
      `(${spec.fleet ? `fleet ${formatFleet(spec.fleet)}` : spec.profile}) at ${slo} for ` +
      `${choices.length} policies${modes} x ${seeds.length} seeds` +
      `${options.split ? ` (split ${options.split})` : ""}\n`,
  );
  const result = await runCapacity(
    {
      spec,
      policies: choices,
      seeds,
      objective,
      split: options.split,
      resolution: options.resolution,
      maxProbes: options.maxProbes,
      coordination: coordinationOf(options),
    },
    pool,
    {
      onSearch: (policy, s) =>
        process.stderr.write(
          `  ${policy} seed ${s.seed}: ${s.capacityRps} req/s (${s.status}, ${s.probes.length} ` +
            `probes) ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
        ),
    },
  );
  process.stderr.write(`searched in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const targets = capacityTargets(result);
  console.log(`\n${capacityHeader(result).join("\n")}\n\n${capacityTable(result)}`);
  if (targets.length > 0) console.log(`\ntargets for cost:\n  ${targets.join("\n  ")}`);
  if (result.edgeRatio.length > 0) console.log(`\n${edgeRatioTable(result)}`);
  return result;
}

export async function runCapacityCli(
  options: CliOptions,
  out: { json: string; html: string },
): Promise<void> {
  const pool = new ProbePool(options.threads);
  try {
    const result = await capacityOf(options, options.slo ?? "p90:2000", pool);
    writeFile(out.json, toJson(result));
    writeFile(out.html, capacityPage(result));
    console.log(`\nwrote ${out.json}\nwrote ${out.html}`);
  } finally {
    await pool.close();
  }
}
