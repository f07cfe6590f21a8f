/**
 * `npm run bench:fleet -- [options]`: the same replay at 2, 4, 8, 16 and 32 origins (`--sizes`),
 * load held constant, to show how each policy's hit rate and p99 TTFT change with fleet size
 * (a cache-blind policy finds a prefix's origin 1/N of the time; cache-aware routing should not
 * decay). With `--seeds K` every size runs every seed and the sweep shows mean (min-max) over
 * them. Prints one table per run and the sweep tables, writes bench/results/fleet.json and
 * fleet.html unless `--json`/`--html` say otherwise.
 */

import { runCli } from "../../sim/cli/cli-args.ts";
import type { PolicyResult } from "../../sim/fleet/result-types.ts";
import { policyRuns, runBenchmark, withSeed, workloadOf } from "../../sim/fleet/runner.ts";
import { ProgressBar } from "../../sim/report/progress.ts";
import { formatTable } from "../../sim/report/table.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { outputPaths, parseCli, USAGE } from "./args.ts";
import { type FleetSweep, fleetPage, runsOfSize } from "./report/html.ts";
import { formatSpread, spreadOf } from "./report/spread.ts";
import { headerLines, resultsTable } from "./report/table.ts";

function sweepTable(s: FleetSweep): string {
  const policies = s.runs[0]?.results.map((p) => p.policy) ?? [];
  const cells = (pick: (p: PolicyResult) => number, digits: number) =>
    policies.map((policy) => [
      policy,
      ...s.sizes.map((n) => {
        const values = runsOfSize(s, n).flatMap((run) =>
          run.results.filter((p) => p.policy === policy).map(pick),
        );
        return values.length > 0 ? formatSpread(spreadOf(values), digits) : "-";
      }),
    ]);
  const oracle = s.sizes.map((n) =>
    formatSpread(spreadOf(runsOfSize(s, n).map((run) => run.fleetOracleHitRate)), 4),
  );
  const over = s.seeds.length > 1 ? `, mean (min-max) over seeds ${s.seeds.join(", ")}` : "";
  const rows = [
    [`hit rate${over}`, ...s.sizes.map((n) => `${n} origins`)],
    ["fleet oracle", ...oracle],
    ...cells((p) => p.hitRate, 4),
    [],
    ["p99 TTFT ms", ...s.sizes.map((n) => `${n} origins`)],
    ...cells((p) => p.ttftMs.p99, 0),
  ];
  return formatTable(rows);
}

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2), "bench:fleet");
  const { json, html } = outputPaths(options, "fleet");
  const sweep: FleetSweep = { sizes: options.sizes, seeds: options.seeds, runs: [] };
  for (const origins of options.sizes) {
    for (const seed of options.seeds) {
      const spec = withSeed({ ...options.spec, origins }, seed);
      const workload = workloadOf(spec);
      process.stderr.write(`\n${origins} origins, seed ${seed}:\n`);
      const labels = policyRuns(spec, options.policies).map((r) => r.label);
      const bar = new ProgressBar(labels, workload.size);
      const result = await runBenchmark(spec, options.policies, {
        threads: options.threads,
        workload,
        onProgress: (i, done) => bar.update(i, done),
      });
      bar.finish();
      console.log(`\n${headerLines(result).join("\n")}\n\n${resultsTable(result)}`);
      sweep.runs.push(result);
    }
  }
  console.log(`\nfleet sweep\n\n${sweepTable(sweep)}`);
  writeFile(json, toJson(sweep));
  writeFile(html, fleetPage(sweep));
  console.log(`\nwrote ${json}\nwrote ${html}`);
}

runCli("bench:fleet", USAGE, main);
