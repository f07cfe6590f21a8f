/**
 * `npm run bench:fleet -- [options]`: the same replay at 2, 4, 8, 16 and 32 origins (`--sizes`),
 * load held constant, to show how each policy's hit rate and p99 TTFT change with fleet size
 * (a cache-blind policy finds a prefix's origin 1/N of the time; cache-aware routing should not
 * decay). Prints one table per size and a sweep table, writes bench/results/fleet.json and
 * fleet.html unless `--json`/`--html` say otherwise.
 */

import { ProgressBar } from "../../sim/report/progress.ts";
import { formatTable } from "../../sim/report/table.ts";
import { outputPaths, parseCli, runMain } from "./args.ts";
import { type FleetSweep, fleetPage } from "./report/html.ts";
import { headerLines, resultsTable } from "./report/table.ts";
import { toJson, writeFile } from "./report/write.ts";
import { policyRuns, runBenchmark, workloadOf } from "./run/runner.ts";

function sweepTable(s: FleetSweep): string {
  const policies = s.runs[0]?.results.map((p) => p.policy) ?? [];
  const cells = (f: (run: FleetSweep["runs"][number], policy: string) => string) =>
    policies.map((policy) => [policy, ...s.runs.map((run) => f(run, policy))]);
  const find = (run: FleetSweep["runs"][number], policy: string) =>
    run.results.find((p) => p.policy === policy);
  const rows = [
    ["hit rate", ...s.sizes.map((n) => `${n} origins`)],
    ["fleet oracle", ...s.runs.map((run) => run.fleetOracleHitRate.toFixed(4))],
    ...cells((run, p) => find(run, p)?.hitRate.toFixed(4) ?? "-"),
    [],
    ["p99 TTFT ms", ...s.sizes.map((n) => `${n} origins`)],
    ...cells((run, p) => Math.round(find(run, p)?.ttftMs.p99 ?? 0).toLocaleString("en-US")),
  ];
  return formatTable(rows);
}

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2));
  const { json, html } = outputPaths(options, "fleet");
  const sweep: FleetSweep = { sizes: options.sizes, runs: [] };
  for (const origins of options.sizes) {
    const spec = { ...options.spec, origins };
    const workload = workloadOf(spec);
    process.stderr.write(`\n${origins} origins:\n`);
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
  console.log(`\nfleet sweep\n\n${sweepTable(sweep)}`);
  writeFile(json, toJson(sweep));
  writeFile(html, fleetPage(sweep));
  console.log(`\nwrote ${json}\nwrote ${html}`);
}

runMain(main);
