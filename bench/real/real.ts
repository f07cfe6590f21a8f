/**
 * `npm run bench:real`: conversations of a trace replayed through the router (wrangler dev, the
 * real Worker and Durable Object) against N real llama-servers, once per policy, each on fresh
 * engines and the same requests; what the client saw per policy; then the simulator on the same
 * requests with a profile fitted to the engines' counters (fitted-sim.ts), and the gap.
 *
 *   npm run bench:real -- [--origins 4] [--policies cost,round-robin] [--requests 80]
 *                         [--load 1] [--max-tokens 16] [--trace PATH] [--json PATH]
 *
 * Needs llama-server (LLAMA_SERVER or PATH). Engines, prompts and pool: tools/llama/cpu-engines.ts.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../../sim/cli/cli-args.ts";
import { DEFAULT_PROFILE, profileNamed } from "../../sim/engine/profiles.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { parseMooncake } from "../../sim/trace/mooncake.ts";
import { POLICY_TYPES, type PolicyType } from "../../src/core/policies/index.ts";
import {
  CPU_ENGINE,
  CPU_POOL,
  CPU_PROMPTS,
  type CpuEngines,
  cachedTokensPerEngine,
  NOMINAL_TOKENS_PER_SECOND,
  startCpuEngines,
} from "../../tools/llama/cpu-engines.ts";
import { addCounters, readCounters } from "../../tools/llama/engine-counters.ts";
import { type Stack, startStack } from "../../tools/local-stack/stack.ts";
import { type ReplayRequest, type ReplayResult, replay } from "../../tools/replay/replay.ts";
import { schedule } from "../../tools/replay/schedule.ts";
import { conversations } from "../../tools/replay/sessions.ts";
import { fittedProfile, realWorkload, simulateReal } from "./fitted-sim.ts";
import {
  type Figures,
  formatComparison,
  formatTargets,
  type RealFigures,
  realFigures,
  simFigures,
  targets,
} from "./real-report.ts";

const root = resolve(import.meta.dirname, "../..");
const usage =
  "usage: npm run bench:real -- [--origins N] [--policies a,b] [--requests N] [--load X]\n" +
  "                             [--max-tokens N] [--trace PATH] [--json PATH]\n" +
  "       (needs llama-server: LLAMA_SERVER or PATH)";
/** llama-server's default `-b`: prompt tokens one decode call takes. */
const BATCH_TOKENS = 2048;
const REPORT_INTERVAL_MS = 500;

function fail(message: string): never {
  console.error(`bench:real: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("bench:real", usage, {
  options: {
    origins: { type: "string", default: "4" },
    policies: { type: "string", default: "cost,round-robin" },
    requests: { type: "string", default: "80" },
    load: { type: "string", default: "1" },
    "max-tokens": { type: "string", default: "16" },
    trace: { type: "string", default: join(root, "tools/replay/conversation-sample.jsonl") },
    json: { type: "string" },
  },
});
const origins = Number(values.origins);
const requests = Number(values.requests);
const load = Number(values.load);
const maxTokens = Number(values["max-tokens"]);
const policies = values.policies.split(",").map((p) => p.trim()) as PolicyType[];
if (!Number.isInteger(origins) || origins < 1 || origins > 8)
  fail(`--origins ${values.origins} must be 1..8`);
if (!Number.isInteger(requests) || requests < 1 || requests > 1000)
  fail(`--requests ${values.requests} must be 1..1000`);
if (!(load > 0 && load <= 4)) fail(`--load ${values.load} must be in (0, 4]`);
if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 512)
  fail(`--max-tokens ${values["max-tokens"]} must be 1..512`);
for (const p of policies)
  if (!POLICY_TYPES.includes(p)) fail(`unknown policy ${p}; known: ${POLICY_TYPES.join(", ")}`);

const records = conversations(
  parseMooncake(readFileSync(values.trace, "utf8"), values.trace).records,
  requests,
);

let cpu: CpuEngines | null = null;
let stack: Stack | null = null;
async function shutdown(): Promise<void> {
  await stack?.stop();
  await cpu?.fleet.stop();
}
process.on("SIGINT", () => void shutdown().then(() => process.exit(130)));
process.on("SIGTERM", () => void shutdown().then(() => process.exit(143)));

const real: RealFigures[] = [];
const runs: { policy: PolicyType; timed: ReplayRequest[]; results: ReplayResult[] }[] = [];
try {
  console.error(`starting ${origins} llama-servers (measuring one's prefill speed first)...`);
  cpu = await startCpuEngines(origins);
  console.error(
    `${origins} llama-servers, ${cpu.fleet.threads} thread(s) each on ${cpu.cores} core(s), ` +
      `${Math.round(cpu.engineTokensPerSecond)} prompt tokens/s per engine alone; wrangler dev...`,
  );
  stack = await startStack({
    root,
    origins: 0,
    external: cpu.fleet.external(),
    profile: profileNamed(DEFAULT_PROFILE),
    timeScale: 1,
    persistTo: join(root, ".wrangler/bench-real-state"),
  });
  const originSettings = stack.originSettings();
  await stack.putSettings({
    pools: Object.fromEntries(
      policies.map((p) => [
        `real-${p}`,
        { origins: originSettings, policy: { type: p }, ...CPU_POOL },
      ]),
    ),
  });
  cpu.fleet.report(stack.routerUrl, stack.secrets.WEBHOOK_SECRET, REPORT_INTERVAL_MS);
  const ids = cpu.fleet.servers.map((s) => s.id);
  for (const [i, policy] of policies.entries()) {
    if (i > 0) {
      await cpu.fleet.restart();
      // Let every reporter see its engine back up (and send its cache-reset) before the replay.
      await new Promise((r) => setTimeout(r, 3 * REPORT_INTERVAL_MS));
    }
    const timed = schedule(records, {
      model: `real-${policy}`,
      load,
      fleetTokensPerSecond: cpu.fleetTokensPerSecond,
      maxTokens,
      ...CPU_PROMPTS,
    });
    const started = performance.now();
    const results = await replay(stack.routerUrl, timed);
    const wallMs = performance.now() - started;
    const counters = addCounters(
      await Promise.all(cpu.fleet.servers.map((s) => readCounters(s.url))),
    );
    const figures = realFigures(policy, results, ids, wallMs, counters);
    real.push(figures);
    runs.push({ policy, timed, results });
    const failed = results.find((r) => !r.ok);
    console.error(
      `  ${policy}: ${(wallMs / 1000).toFixed(1)} s` +
        (failed ? `; a request failed: ${failed.error}` : ""),
    );
  }
} finally {
  await shutdown();
}

// One profile for all policies (fitted-sim.ts says why each speed comes from where it does).
const seen = addCounters(real.map((f) => f.counters));
const engines = {
  prefillTokensPerSecond: seen.promptTokens / Math.max(1e-9, seen.promptSeconds),
  decodeMsPerToken: cpu.decodeMsPerToken,
  cachedTokens: cachedTokensPerEngine(),
  slots: CPU_ENGINE.slots,
  batchTokens: BATCH_TOKENS,
  tokensPerByte: CPU_PROMPTS.bytesPerToken,
};
const profile = fittedProfile(engines);
const told = cpu.fleet.external()[0]?.prefillTokensPerSecond ?? profile.prefillTokensPerSecond;
const sim: Figures[] = runs.map(({ policy, timed, results }) => {
  const w = realWorkload(timed, results, CPU_POOL.chunkBytes);
  const r = simulateReal(w, policy, {
    origins,
    profile,
    prefillCalibration: told / profile.prefillTokensPerSecond,
    reportIntervalMs: REPORT_INTERVAL_MS,
    seed: 1,
  });
  return simFigures(r, timed.length);
});

const checked = targets(real, sim);
console.log(
  `\nbench:real: ${records.length} requests per policy, ${origins} llama-servers ` +
    `(${cpu.fleet.threads} thread(s) each, ${CPU_ENGINE.slots} slots, --cache-ram ${CPU_ENGINE.cacheRamMiB} MiB), ` +
    `load ${load}, prompts shrunk ${512 / CPU_PROMPTS.bytesPerBlock}x`,
);
console.log(
  `simulator: ${profile.source}\n` +
    `(one engine alone: ${Math.round(cpu.engineTokensPerSecond)} prompt tokens/s; requests over ` +
    `the runs saw ${((1000 * seen.decodeSeconds) / Math.max(1, seen.decodeTokens)).toFixed(0)} ms per output token)\n`,
);
console.log(formatComparison(real, sim));
console.log(`\n${formatTargets(checked)}`);

const json =
  values.json ?? join(root, `bench/results/real-${origins}o-${records.length}r-load${load}.json`);
writeFile(
  json,
  toJson({
    trace: values.trace,
    origins,
    requests: records.length,
    load,
    maxTokens,
    threadsPerEngine: cpu.fleet.threads,
    cores: cpu.cores,
    engine: {
      ...CPU_ENGINE,
      nominalTokensPerSecondPerCore: NOMINAL_TOKENS_PER_SECOND,
      aloneTokensPerSecond: cpu.engineTokensPerSecond,
      aloneDecodeMsPerToken: cpu.decodeMsPerToken,
    },
    prompts: CPU_PROMPTS,
    pool: CPU_POOL,
    profile,
    real,
    simulated: sim,
    targets: checked,
  }),
);
console.log(`\nwrote ${json}`);
