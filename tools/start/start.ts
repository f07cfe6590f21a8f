/**
 * `npm start`: the whole router running locally, exercised for real. It starts simulated GPU
 * engines and `wrangler dev`, writes settings through the admin API (tokens from a generated
 * `.dev.vars`), replays whole conversations of the Mooncake trace through the router over HTTP
 * with the `openai` client (once per policy, on the same requests, each policy in its own pool
 * so no run warms another's caches), prints a table, and leaves the stack running.
 *
 *   npm start -- [--requests 300] [--policy cost,round-robin] [--origins 4] [--trace PATH]
 *                [--time-scale 10] [--load 0.7] [--once] [--pd [--pd-protocol vllm-nixl|sglang]]
 *                [--coordination object|edge] [--engines sim|llama]
 *
 * With `--pd`, the engines are a disaggregated fleet (one prefill engine in four, the rest
 * decode) speaking vLLM's NIXL protocol (or SGLang's), and every pool is a P/D pool.
 * `--coordination edge` makes every pool edge-coordinated: each Worker isolate routes with its
 * own replica and syncs in batches with the pool's coordinator object (docs/architecture.md).
 * `--engines llama` puts real llama-servers behind the router instead of simulated engines
 * (`LLAMA_SERVER` or PATH; tools/llama/cpu-engines.ts): CPU threads shared out over the
 * machine's cores, prompts shrunk to what a CPU prefills in seconds, a reporter per engine
 * (`--kind llamacpp`), and the engines restarted between policies so none inherits a cache.
 * Its pools are open to clients without a key (`access: "open"`); if a key made earlier in the
 * local state named one, the replay makes and uses a key of its own (replay-key.ts).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../../sim/cli/cli-args.ts";
import { DEFAULT_PROFILE, profileNamed } from "../../sim/engine/profiles.ts";
import { ProgressBar } from "../../sim/report/progress.ts";
import { parseMooncake } from "../../sim/trace/mooncake.ts";
import { POLICY_TYPES, type PolicyType } from "../../src/core/policies/index.ts";
import { COORDINATION_MODES, type Coordination } from "../../src/core/settings/edge-settings.ts";
import { CPU_POOL, CPU_PROMPTS, type CpuEngines, startCpuEngines } from "../llama/cpu-engines.ts";
import { pdFleet, type Stack, startStack } from "../local-stack/stack.ts";
import { replay } from "../replay/replay.ts";
import { schedule } from "../replay/schedule.ts";
import { conversations } from "../replay/sessions.ts";
import { formatSummaries, type PolicySummary, summarise } from "../replay/summary.ts";
import { pdSummary } from "./pd-summary.ts";
import { replayKey } from "./replay-key.ts";

const root = resolve(import.meta.dirname, "../..");
const usage =
  "usage: npm start -- [--requests N] [--policy a,b] [--origins N] [--trace PATH] [--time-scale S] [--load X] [--once]\n" +
  "                    [--pd [--pd-protocol vllm-nixl|sglang]] [--coordination object|edge]\n" +
  "                    [--engines sim|llama]   (llama: real llama-servers, LLAMA_SERVER or PATH)";

function fail(message: string): never {
  console.error(`start: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("start", usage, {
  options: {
    requests: { type: "string", default: "300" },
    policy: { type: "string", default: "cost,round-robin" },
    origins: { type: "string", default: "4" },
    trace: { type: "string", default: join(root, "tools/replay/conversation-sample.jsonl") },
    // Real time: faster engines mean proportionally more requests per second, and a shared
    // 2-core machine's wrangler dev falls behind at 4x; TTFT then measures its backlog.
    "time-scale": { type: "string", default: "1" },
    load: { type: "string", default: "0.6" },
    "max-tokens": { type: "string" },
    once: { type: "boolean", default: false },
    pd: { type: "boolean", default: false },
    "pd-protocol": { type: "string", default: "vllm-nixl" },
    coordination: { type: "string", default: "object" },
    engines: { type: "string", default: "sim" },
  },
});
const requests = Number(values.requests);
const origins = Number(values.origins);
const timeScale = Number(values["time-scale"]);
const load = Number(values.load);
// A CPU engine decodes ~10-40 ms a token: long answers would only make the replay slow.
const maxTokens = Number(values["max-tokens"] ?? (values.engines === "llama" ? 16 : 256));
const policies = values.policy.split(",").map((p) => p.trim()) as PolicyType[];
if (!Number.isInteger(requests) || requests < 1) fail(`--requests ${values.requests} must be >= 1`);
if (!Number.isInteger(origins) || origins < 1 || origins > 26)
  fail(`--origins ${values.origins} must be 1..26`);
if (!(timeScale > 0) || !(load > 0) || !(maxTokens >= 1))
  fail("--time-scale, --load, --max-tokens must be positive");
for (const p of policies)
  if (!POLICY_TYPES.includes(p)) fail(`unknown policy ${p}; known: ${POLICY_TYPES.join(", ")}`);
const protocol = values["pd-protocol"];
if (protocol !== "vllm-nixl" && protocol !== "sglang")
  fail(`--pd-protocol ${protocol} must be vllm-nixl or sglang`);
if (values.pd && origins < 2) fail("--pd needs --origins 2 or more");
if (!(COORDINATION_MODES as readonly string[]).includes(values.coordination))
  fail(`--coordination ${values.coordination} must be one of ${COORDINATION_MODES.join(", ")}`);
const coordination = values.coordination as Coordination;
if (values.engines !== "sim" && values.engines !== "llama")
  fail(`--engines ${values.engines} must be sim or llama`);
const llama = values.engines === "llama";
if (llama && values.pd) fail("--pd needs --engines sim (llama-server here serves whole requests)");
// Edge replicas learn from decisions alone; a P/D pool keeps its one object (edge-settings.ts).
if (values.pd && coordination === "edge") fail("--pd needs --coordination object");
// SGLang decode engines cannot serve alone: an sglang fleet always prefills remotely.
const disaggregation = !values.pd
  ? {}
  : {
      disaggregation:
        protocol === "sglang" ? { minUncachedTokens: 0, prefillBusyMs: 3_600_000 } : {},
    };

const profile = profileNamed(DEFAULT_PROFILE);
const records = conversations(
  parseMooncake(readFileSync(values.trace, "utf8"), values.trace).records,
  requests,
);

const persistTo = join(root, ".wrangler/start-state");
let stack: Stack | null = null;
let cpu: CpuEngines | null = null;
let stopping = false;
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await stack?.stop();
    await cpu?.fleet.stop();
  }
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(130));
process.on("SIGTERM", () => void shutdown(143));

const fleet = values.pd ? ` (${protocol} prefill/decode)` : "";
if (llama) {
  console.error(`starting ${origins} llama-servers (measuring their prefill speed first)...`);
  cpu = await startCpuEngines(origins);
  console.error(
    `${origins} llama-servers, ${cpu.fleet.threads} thread(s) each, ` +
      `${Math.round(cpu.engineTokensPerSecond)} prompt tokens/s per engine alone; wrangler dev...`,
  );
} else {
  console.error(
    `starting ${origins} engines${fleet} (${profile.name}, time x${timeScale}) and wrangler dev...`,
  );
}
stack = await startStack({
  root,
  origins: cpu ? 0 : origins,
  external: cpu?.fleet.external(),
  engines: values.pd ? pdFleet(origins, protocol) : undefined,
  profile,
  timeScale,
  persistTo,
});
const pools = Object.fromEntries(
  policies.map((p) => [
    `demo-${p}`,
    {
      origins: stack?.originSettings() ?? [],
      policy: { type: p },
      coordination,
      ...disaggregation,
      ...(llama ? CPU_POOL : {}),
    },
  ]),
);
await stack.putSettings({ pools });
const key = await replayKey(stack, Object.keys(pools), persistTo);
if (key.note) console.error(`note: ${key.note}\n`);
cpu?.fleet.report(stack.routerUrl, stack.secrets.WEBHOOK_SECRET);
console.error(
  `router ${stack.routerUrl}: ${records.length} requests per policy, load ${load}, ` +
    `coordination ${coordination}\n`,
);

const fleetTokensPerSecond = cpu
  ? cpu.fleetTokensPerSecond
  : origins * profile.prefillTokensPerSecond * timeScale;
const bar = new ProgressBar(policies, records.length);
const rows: PolicySummary[] = [];
for (const [i, policy] of policies.entries()) {
  const model = `demo-${policy}`;
  if (cpu && i > 0) {
    await cpu.fleet.restart();
    // Let every reporter see its engine back up (and send its cache-reset) before the replay.
    await new Promise((r) => setTimeout(r, 1500));
  }
  const shape = cpu ? CPU_PROMPTS : {};
  const timed = schedule(records, { model, load, fleetTokensPerSecond, maxTokens, ...shape });
  const results = await replay(stack.routerUrl, timed, (done) => bar.update(i, done), key.apiKey);
  // Prefill engines never answer a client: their columns would be zeros.
  const serving = cpu
    ? cpu.fleet.servers.map((s) => s.id)
    : stack.engines.filter((e) => e.pd?.role !== "prefill").map((e) => e.id);
  rows.push(summarise(policy, results, serving));
  const failed = results.find((r) => !r.ok);
  if (failed) console.error(`\n${policy}: a request failed: ${failed.error}`);
}
await key.revoke();
console.log(`\n${formatSummaries(rows)}\n`);
if (values.pd) {
  console.log(`${await pdSummary(stack, Object.keys(pools))}\n`);
  console.log("Cached tokens are what clients saw: a decode engine counts the KV it was sent.");
}
console.log(
  cpu
    ? `TTFT is wall-clock at the client; real llama-servers on ${cpu.cores} CPU core(s), prompts shrunk ${512 / CPU_PROMPTS.bytesPerBlock}x.`
    : `TTFT is wall-clock at the client; engines run at ${timeScale}x a real H100's speed.`,
);
const failures = rows.reduce((s, r) => s + r.failed, 0);
if (values.once) await shutdown(failures > 0 ? 1 : 0);

console.log(
  `\nThe router is running at ${stack.routerUrl} (OpenAI base URL ${stack.routerUrl}/v1).`,
);
console.log(`Models: ${Object.keys(pools).join(", ")}. Admin token: ADMIN_TOKEN in .dev.vars.`);
console.log(`Dashboard: ${stack.routerUrl}/dashboard   Metrics: ${stack.routerUrl}/metrics`);
console.log("Press Ctrl-C to stop everything.");
