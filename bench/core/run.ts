/**
 * `npm run bench:core`: micro-benchmarks of the pure core and the edge, printed as tables and
 * saved as JSON (bench/results/core.json). Targets are printed beside the figures, never
 * asserted: these machines are noisy, so compare medians measured side by side in one run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { commandLine } from "../../sim/cli/cli-args.ts";
import { benchHashing } from "./hash-bench.ts";
import { benchRadixIndex } from "./radix-index-bench.ts";
import { benchRoute } from "./route-bench.ts";
import { printTable, type Row } from "./table.ts";
import { benchWorstShapes, printWorstShapes } from "./validation-bench.ts";

// No options; --help, or anything else, answers before the two-minute run starts.
commandLine(
  "bench:core",
  "usage: npm run bench:core   (no options; results in bench/results/core.json)",
  { options: {} },
);

/** A section runs once; its results are printed and saved under its title. */
type Section = [title: string, run: (title: string) => unknown[]];

const rows =
  (bench: () => Row[]) =>
  (title: string): Row[] => {
    const result = bench();
    printTable(title, result);
    return result;
  };

function worstShapes(title: string) {
  const result = benchWorstShapes();
  printWorstShapes(title, result);
  console.log(
    "edge: budget scan, validation, canonicalise and hash (median of 5); MB: V8 heap allocated.\n" +
      "JSON.parse: the platform's cost on the same body (decode and parse, one run), spared when\n" +
      "the scan rejects the body.",
  );
  return result;
}

const sections: Section[] = [
  ["Edge: canonicalise + hash", rows(benchHashing)],
  ["Edge: worst request shapes (targets: edge <= 200 ms, <= 2x the body)", worstShapes],
  ["Radix index: 1M chunk-ownerships over 32 origins", rows(() => benchRadixIndex().rows)],
  ["Router: route() on 32 origins, ~1M chunk-ownerships", rows(benchRoute)],
];

const results: Record<string, unknown[]> = {};
for (const [title, run] of sections) results[title] = run(title);
mkdirSync("bench/results", { recursive: true });
const meta = { node: process.version, arch: process.arch, date: new Date().toISOString() };
writeFileSync("bench/results/core.json", `${JSON.stringify({ meta, results }, null, 2)}\n`);
console.log("\nwrote bench/results/core.json");
