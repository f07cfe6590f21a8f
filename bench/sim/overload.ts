/**
 * `npm run bench:overload -- [--limit N] [--seed N] [--scenarios LIST] [--json PATH]`: the
 * conversation trace on 8 origins under `cost`, offered past the pool's capacity by tenant
 * mixes (overload/overload-scenarios.ts), with admission off and on; prints the tables and the
 * targets, writes the JSON (bench/results/overload.json). See README.md, "Overload".
 */

import { resolve } from "node:path";
import { parseCommandLine, runCli } from "../../sim/cli/cli-args.ts";
import { workloadOf } from "../../sim/fleet/runner.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { DEFAULT_TRACE, REPO_ROOT, UsageError } from "./args.ts";
import { keyTable, overloadTargets, poolTable, priorityTable } from "./overload/overload-report.ts";
import { type OverloadRun, type OverloadSetup, runOverload } from "./overload/overload-run.ts";
import { overloadCases, SCENARIOS } from "./overload/overload-scenarios.ts";

/**
 * `cost`'s capacity on this workload at p90 TTFT 2 s (`npm run bench:capacity -- --origins 8`,
 * README.md's capacity table): what goodput is measured against, and what loads multiply.
 */
const CAPACITY_RPS = 7.71;
const OBJECTIVE_MS = 2000;

const USAGE = `usage: npm run bench:overload -- [options]
  --limit N          replay the first N requests of the trace (default all)
  --seed N           seed (default 1)
  --scenarios LIST   a comma list of ${SCENARIOS.join(", ")} (default all)
  --json PATH        results JSON (default bench/results/overload.json)`;

async function main(): Promise<void> {
  const { values } = parseCommandLine({
    args: process.argv.slice(2),
    options: {
      limit: { type: "string" },
      seed: { type: "string", default: "1" },
      scenarios: { type: "string", default: SCENARIOS.join(",") },
      json: { type: "string" },
    },
  });
  const seed = Number(values.seed);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (!Number.isInteger(seed) || (limit !== undefined && !(Number.isInteger(limit) && limit > 0))) {
    throw new UsageError("--seed and --limit take whole numbers");
  }
  const setup: OverloadSetup = {
    spec: {
      source: { kind: "mooncake", path: DEFAULT_TRACE },
      trace: "conversation",
      limit,
      arrivals: "jitter",
      load: 1,
      origins: 8,
      profile: "llama-3.1-8b-h100",
      chunkTokens: 64,
      seed,
      reportIntervalMs: 1000,
      reportDelayMs: 100,
      engineDelayMs: 10,
      prefillCalibration: [1],
    },
    policy: "cost",
    capacityRps: CAPACITY_RPS,
    objectiveMs: OBJECTIVE_MS,
    // OpenAI's clients: a 60 s timeout here for the first token, two retries.
    clients: { timeoutMs: 60_000, maxRetries: 2 },
  };
  const cases = overloadCases((values.scenarios as string).split(","));
  const base = workloadOf(setup.spec);
  const runs: OverloadRun[] = [];
  const started = performance.now();
  for (const c of cases) {
    runs.push(runOverload(base, setup, c));
    process.stderr.write(
      `  ${c.scenario} load ${c.load} admission ${c.admission ? "on" : "off"} ` +
        `${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
  }
  console.log(
    `conversation | 8 origins | cost | ${base.size.toLocaleString("en-US")} requests | seed ${seed} | ` +
      `capacity ${CAPACITY_RPS} req/s at p90 TTFT ${OBJECTIVE_MS} ms | clients: 60 s timeout, 2 retries\n`,
  );
  console.log(`${poolTable(runs)}\n\n${priorityTable(runs)}\n\n${keyTable(runs)}\n`);
  console.log(`targets:\n  ${overloadTargets(runs, OBJECTIVE_MS, limit).join("\n  ")}`);
  const json = values.json ?? resolve(REPO_ROOT, "bench/results/overload.json");
  writeFile(json, toJson({ setup: { ...setup, capacityRps: CAPACITY_RPS }, runs }));
  process.stderr.write(`wrote ${json}\n`);
}

runCli("bench:overload", USAGE, main);
