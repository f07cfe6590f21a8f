/**
 * `npm run bench:capacity -- [options]`: per policy, the highest offered request rate at which
 * the TTFT objective (`--slo`) holds and the fleet keeps up, over `--seeds` seeds; prints the
 * table and the targets for `cost`, writes the JSON (every probe included) and the HTML page.
 * `--suite NAME` runs a documented workload set instead (`capacity/suite.ts`). See README.md.
 */
import { outputPaths, parseCli, runMain, UsageError } from "./args.ts";
import { runCapacityCli } from "./capacity/capacity-cli.ts";
import { runSuite } from "./capacity/suite.ts";

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2), { tuned: true });
  if (options.suite !== undefined) {
    return runSuite(process.argv.slice(2), options.suite, options.out);
  }
  if (options.out !== undefined) throw new UsageError("--out goes with --suite");
  const slug = options.slug.replace(/-load[\d.]+$/, "");
  await runCapacityCli(options, outputPaths(options, `capacity-${slug}`));
}

runMain(main);
