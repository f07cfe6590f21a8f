/**
 * `npm run bench -- [options]`: replay one trace over a simulated fleet for every policy, print
 * the table and the targets, write the JSON and the HTML report (see `--help` and README.md).
 * With `--seeds K` it replays each seed in turn, prints each seed's table and then the spread
 * over seeds, and writes `{ seeds, spread, runs }` (each run as one seed alone would write it).
 */

import { runCli } from "../../sim/cli/cli-args.ts";
import type { BenchResult } from "../../sim/fleet/result-types.ts";
import { policyRuns, runBenchmark, withSeed, workloadOf } from "../../sim/fleet/runner.ts";
import { ProgressBar } from "../../sim/report/progress.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { outputPaths, parseCli, USAGE } from "./args.ts";
import { benchPage } from "./report/html.ts";
import { policySpreads, spreadTable } from "./report/spread.ts";
import { headerLines, resultsTable } from "./report/table.ts";
import { targetLines } from "./report/targets.ts";

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2), "bench");
  const { policies, seeds } = options;
  const runs: BenchResult[] = [];
  for (const seed of seeds) {
    const spec = withSeed(options.spec, seed);
    const workload = workloadOf(spec);
    process.stderr.write(
      `replaying ${workload.size.toLocaleString("en-US")} requests of ${spec.trace} on ` +
        `${spec.origins} origins at load ${spec.load} for ${policies.length} policies, seed ${seed}\n`,
    );
    const labels = policyRuns(spec, policies).map((r) => r.label);
    const bar = new ProgressBar(labels, workload.size);
    const result = await runBenchmark(spec, policies, {
      threads: options.threads,
      workload,
      onProgress: (i, done) => bar.update(i, done),
    });
    bar.finish();
    console.log(`\n${headerLines(result).join("\n")}\n\n${resultsTable(result)}`);
    const targets = targetLines(result);
    if (targets.length > 0) console.log(`\ntargets for cost:\n  ${targets.join("\n  ")}`);
    runs.push(result);
  }
  const { json, html } = outputPaths(options, options.slug);
  const first = runs[0] as BenchResult;
  if (runs.length === 1) {
    writeFile(json, toJson(first));
    writeFile(html, benchPage(first));
  } else {
    const spread = policySpreads(runs);
    const table = spreadTable(spread);
    console.log(`\nover seeds ${seeds.join(", ")}: mean (min-max)\n\n${table}`);
    writeFile(json, toJson({ seeds, spread, runs }));
    writeFile(html, benchPage(first, { seeds, table }));
  }
  console.log(`\nwrote ${json}\nwrote ${html}`);
}

runCli("bench", USAGE, main);
