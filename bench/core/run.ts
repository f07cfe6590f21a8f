/**
 * `npm run bench:core`: micro-benchmarks of the pure core, printed as tables and saved as JSON
 * (bench/results/core.json). Targets are printed beside the figures, never asserted: these
 * machines are noisy, so compare medians measured side by side in one run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { benchHashing } from "./hash-bench.ts";
import { benchRadixIndex } from "./radix-index-bench.ts";
import { benchRoute } from "./route-bench.ts";
import { printTable, type Row } from "./table.ts";

const sections: [string, () => Row[]][] = [
  ["Edge: canonicalise + hash", benchHashing],
  ["Radix index: 1M chunk-ownerships over 32 origins", () => benchRadixIndex().rows],
  ["Router: route() on 32 origins, ~1M chunk-ownerships", benchRoute],
];

const results: Record<string, Row[]> = {};
for (const [title, run] of sections) {
  const rows = run();
  results[title] = rows;
  printTable(title, rows);
}
mkdirSync("bench/results", { recursive: true });
const meta = { node: process.version, arch: process.arch, date: new Date().toISOString() };
writeFileSync("bench/results/core.json", `${JSON.stringify({ meta, results }, null, 2)}\n`);
console.log("\nwrote bench/results/core.json");
