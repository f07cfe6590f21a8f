/**
 * `npm run bench -- [options]`: replay one trace over a simulated fleet for every policy, print
 * the table and the targets, write the JSON and the HTML report (see `--help` and README.md).
 */

import { ProgressBar } from "../../sim/report/progress.ts";
import { outputPaths, parseCli, runMain } from "./args.ts";
import { benchPage } from "./report/html.ts";
import { headerLines, resultsTable } from "./report/table.ts";
import { targetLines } from "./report/targets.ts";
import { toJson, writeFile } from "./report/write.ts";
import { policyRuns, runBenchmark, workloadOf } from "./run/runner.ts";

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2));
  const { spec, policies } = options;
  const workload = workloadOf(spec);
  const requests = workload.size;
  process.stderr.write(
    `replaying ${requests.toLocaleString("en-US")} requests of ${spec.trace} on ${spec.origins} ` +
      `origins at load ${spec.load} for ${policies.length} policies\n`,
  );
  const labels = policyRuns(spec, policies).map((r) => r.label);
  const bar = new ProgressBar(labels, requests);
  const result = await runBenchmark(spec, policies, {
    threads: options.threads,
    workload,
    onProgress: (i, done) => bar.update(i, done),
  });
  bar.finish();
  console.log(`\n${headerLines(result).join("\n")}\n\n${resultsTable(result)}`);
  const targets = targetLines(result);
  if (targets.length > 0) console.log(`\ntargets for cost:\n  ${targets.join("\n  ")}`);
  const { json, html } = outputPaths(options, options.slug);
  writeFile(json, toJson(result));
  writeFile(html, benchPage(result));
  console.log(`\nwrote ${json}\nwrote ${html}`);
}

runMain(main);
