/**
 * `npm run bench:tune -- [bench:capacity's options] [--policies LIST] [--json PATH]`: grids each
 * baseline's documented knobs (capacity/tuned.ts) on the tuning split, searching every point's
 * capacity as bench:capacity does, and writes the chosen values with the grid and its figures
 * to bench/sim/tuned.json (or `--json`), keeping other baselines' entries. `cost` runs at its
 * defaults beside them, for reference. See bench/sim/README.md, "Tuned baselines".
 */

import { runCli } from "../../sim/cli/cli-args.ts";
import { formatFleet } from "../../sim/fleet/gpu-fleet.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { parseCli, USAGE, UsageError } from "./args.ts";
import { runCapacity } from "./capacity/capacity-run.ts";
import { ProbePool } from "./capacity/probe-pool.ts";
import {
  bestPoint,
  gridChoices,
  readTuned,
  TUNABLE,
  TUNED_PATH,
  type TunedFile,
} from "./capacity/tuned.ts";
import { parseObjective } from "./capacity/verdict.ts";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseCli(argv, "bench:tune");
  if (options.split === "report") throw new UsageError("bench:tune runs on --split tune only");
  const policies = options.policies.filter((p) => TUNABLE.includes(p));
  if (policies.length === 0) throw new UsageError(`--policies: tunable are ${TUNABLE.join(", ")}`);
  const slo = options.slo ?? "p90:2000";
  let objective: ReturnType<typeof parseObjective>;
  try {
    objective = parseObjective(slo);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const out = options.json ?? TUNED_PATH;
  const choices = [
    { policy: "cost" as const, label: "cost", params: {} },
    ...policies.flatMap(gridChoices),
  ];
  const started = performance.now();
  process.stderr.write(
    `tuning ${policies.join(", ")} (${choices.length - 1} points) on ${options.spec.trace}, ` +
      `${options.spec.origins} origins, ${slo}, split tune, seeds ${options.seeds.join(", ")}\n`,
  );
  const pool = new ProbePool(options.threads);
  const result = await runCapacity(
    {
      spec: options.spec,
      policies: choices,
      seeds: options.seeds,
      objective,
      resolution: options.resolution,
      maxProbes: options.maxProbes,
      coordination: [],
      split: "tune",
      keepUpCeiling: false,
    },
    pool,
    {
      onSearch: (label, s) =>
        process.stderr.write(
          `  ${label} seed ${s.seed}: ${s.capacityRps} req/s (${s.probes.length} probes) ` +
            `${((performance.now() - started) / 1000).toFixed(0)} s\n`,
        ),
    },
  ).finally(() => pool.close());
  const previous = readTuned(out);
  const file: TunedFile = {
    command: `npm run bench:tune -- ${argv.join(" ")}`,
    trace: result.trace,
    origins: result.origins,
    fleet: options.spec.fleet ? formatFleet(options.spec.fleet) : null,
    objective: result.objective,
    split: "tune",
    seeds: [...options.seeds],
    cost: result.results.find((r) => r.policy === "cost")?.capacityRps ?? null,
    policies: { ...previous?.policies },
  };
  for (const policy of policies) {
    const grid = result.results
      .filter((r) => r.policy.startsWith(`${policy}{`))
      .map((r) => {
        const points = gridChoices(policy);
        const params = points.find((c) => c.label === r.policy)?.params ?? {};
        const { mean, min, max } = r.capacityRps;
        return { params: params as Record<string, number>, capacityRps: { mean, min, max } };
      });
    file.policies[policy] = { grid, chosen: bestPoint(grid) };
    const best = grid.find((g) => g.params === file.policies[policy]?.chosen);
    console.log(
      `${policy}: chose ${JSON.stringify(best?.params)} at ${best?.capacityRps.mean} req/s ` +
        `(default ${grid[0]?.capacityRps.mean} req/s)`,
    );
  }
  console.log(`cost (defaults, for reference): ${file.cost?.mean} req/s`);
  writeFile(out, toJson(file));
  console.log(`\nwrote ${out} in ${((performance.now() - started) / 60_000).toFixed(1)} min`);
}

runCli("bench:tune", USAGE, main);
