/**
 * `npm run bench:pd -- [options]`: one workload on an aggregated fleet and on a P/D fleet of the
 * same GPU count (`--pd P:D`, default 2:6) in each of `--modes` (default conditional, always),
 * over `--seeds` (default 1,2,3), for each of `--policies` (default cost). Prints a table per
 * policy (means over seeds) and the targets for disaggregation (measured, never asserted),
 * writes the JSON to bench/results/pd-<trace>-....json unless `--json` says otherwise.
 */
import { runCli } from "../../sim/cli/cli-args.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { outputPaths, parseCli, USAGE } from "./args.ts";
import { runPdComparison } from "./pd/pd-comparison.ts";
import { pdTable, pdTargetLines, policiesOf } from "./report/pd-table.ts";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const withPolicies = argv.includes("--policies") ? argv : [...argv, "--policies", "cost"];
  const options = parseCli(
    withPolicies.includes("--pd") ? withPolicies : [...withPolicies, "--pd", "2:6"],
    "bench:pd",
  );
  const { spec, policies, seeds, modes } = options;
  const pd = spec.pd;
  if (!pd) throw new Error("bench:pd needs a P/D split");
  const fleets = 1 + modes.length;
  process.stderr.write(
    `replaying ${spec.trace} at load ${spec.load} on ${fleets} fleets x ${seeds.length} seeds ` +
      `for ${policies.join(", ")}\n`,
  );
  const started = Date.now();
  const comparison = await runPdComparison(spec, pd, policies, {
    seeds,
    modes,
    concurrency: Math.max(1, options.threads),
    onRun: (run) => process.stderr.write(`  ${run.fleet}, seed ${run.seed}: done\n`),
  });
  process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const first = comparison.runs[0]?.result;
  const outputs = spec.outputScale === 1 ? "" : ` | outputs x${spec.outputScale}`;
  console.log(
    `\n${spec.trace} | load ${spec.load} | ${spec.profile}${outputs} | ` +
      `${first?.requests.toLocaleString("en-US")} requests | seeds ${seeds.join(",")}`,
  );
  for (const policy of policiesOf(comparison)) {
    console.log(`\n${policy}: means over seeds\n\n${pdTable(comparison, policy)}`);
    console.log(`\ntargets:\n  ${pdTargetLines(comparison, policy).join("\n  ")}`);
  }
  const { json } = outputPaths(options, `pd-${options.slug}`);
  writeFile(json, toJson(comparison));
  console.log(`\nwrote ${json}`);
}

runCli("bench:pd", USAGE, main);
