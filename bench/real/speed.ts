/**
 * `npm run bench:speed`: what the router learns of real llama-servers' prefill speed, against
 * what their `/metrics` counters say and what the engines did (prefill-truth.ts). Conversations
 * of a trace are routed by `cost` in this process and sent straight to the engines
 * (direct-replay.ts); each engine is also timed alone on the idle machine before and after.
 *
 *   npm run bench:speed -- [--engines 2] [--slots 2] [--requests 200] [--load 0.6]
 *                          [--trace PATH] [--json PATH]
 *
 * Per engine: learned (the router's speed and fixed time after the run, in its short-context
 * token equivalents: 1-3% above tokens for these prompts), counters (prompt tokens over prompt
 * seconds, differenced over the run), and from the engine's own per-request timings: busy
 * (prompt tokens over the time the engine spent prefilling), alone (requests whose prefill
 * shared no batch), line (the router's model fitted to the engine's prompt times: the marginal
 * speed and each prefill's fixed cost) and idle (fresh prompts on the idle fleet). Needs
 * llama-server (LLAMA_SERVER or PATH); engines and prompts: tools/llama/cpu-engines.ts. Bounded:
 * the replay spans its requests' work at `load`, about 3 minutes for 200 on 2 cores.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../../sim/cli/cli-args.ts";
import { toJson, writeFile } from "../../sim/report/write.ts";
import { parseMooncake } from "../../sim/trace/mooncake.ts";
import { CoreRouter } from "../../src/core/router/core-router.ts";
import { parsePool } from "../../src/core/settings/parse-settings.ts";
import {
  CPU_POOL,
  CPU_PROMPTS,
  type CpuEngines,
  startCpuEngines,
} from "../../tools/llama/cpu-engines.ts";
import { counterDelta, readCounters } from "../../tools/llama/engine-counters.ts";
import { schedule } from "../../tools/replay/schedule.ts";
import { conversations } from "../../tools/replay/sessions.ts";
import { directReplay } from "./direct-replay.ts";
import { prefillSpeeds } from "./prefill-truth.ts";

const root = resolve(import.meta.dirname, "../..");
const usage =
  "usage: npm run bench:speed -- [--engines N] [--slots N] [--requests N] [--load X]\n" +
  "                              [--trace PATH] [--json PATH]   (needs llama-server)";

function fail(message: string): never {
  console.error(`bench:speed: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("bench:speed", usage, {
  options: {
    engines: { type: "string", default: "2" },
    slots: { type: "string", default: "2" },
    requests: { type: "string", default: "200" },
    load: { type: "string", default: "0.6" },
    trace: { type: "string", default: join(root, "tools/replay/conversation-sample.jsonl") },
    json: { type: "string" },
  },
});
const count = Number(values.engines);
const slots = Number(values.slots);
const requests = Number(values.requests);
const load = Number(values.load);
if (!Number.isInteger(count) || count < 1 || count > 8) fail("--engines must be 1..8");
if (!Number.isInteger(slots) || slots < 1 || slots > 8) fail("--slots must be 1..8");
if (!Number.isInteger(requests) || requests < 1 || requests > 1000)
  fail("--requests must be 1..1000");
if (!(load > 0 && load <= 4)) fail("--load must be in (0, 4]");

const IDLE_PROMPTS = 3;

/** One engine's prefill speed alone on an otherwise idle fleet: fresh prompts one at a time. */
async function idleSpeed(url: string, tag: string): Promise<number> {
  let tokens = 0;
  let ms = 0;
  for (let i = 0; i < IDLE_PROMPTS; i++) {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: `${tag} ${i}: ${"an idle probe; ".repeat(40)}` }],
        max_tokens: 1,
      }),
    });
    const body = (await res.json()) as { timings?: { prompt_n: number; prompt_ms: number } };
    tokens += body.timings?.prompt_n ?? 0;
    ms += body.timings?.prompt_ms ?? 0;
  }
  return ms > 0 ? (1000 * tokens) / ms : Number.NaN;
}

async function idleSpeeds(cpu: CpuEngines, tag: string): Promise<number[]> {
  const speeds: number[] = [];
  for (const s of cpu.fleet.servers) speeds.push(await idleSpeed(s.url, `${tag} ${s.id}`));
  return speeds;
}

const records = conversations(
  parseMooncake(readFileSync(values.trace, "utf8"), values.trace).records,
  requests,
);

let cpu: CpuEngines | null = null;
process.on("SIGINT", () => void cpu?.fleet.stop().then(() => process.exit(130)));
process.on("SIGTERM", () => void cpu?.fleet.stop().then(() => process.exit(143)));

const model = "speed";
try {
  console.error(`starting ${count} llama-servers, ${slots} slot(s) each...`);
  cpu = await startCpuEngines(count, undefined, slots);
  const { servers } = cpu.fleet;
  const router = new CoreRouter(
    parsePool({ origins: cpu.fleet.external(), policy: { type: "cost" }, ...CPU_POOL }),
    { model },
  );
  const before = await idleSpeeds(cpu, "before");
  const timed = schedule(records, {
    model,
    load,
    fleetTokensPerSecond: cpu.fleetTokensPerSecond,
    maxTokens: 16,
    ...CPU_PROMPTS,
  });
  const span = ((timed.at(-1)?.atMs ?? 0) / 1000).toFixed(0);
  console.error(`${timed.length} requests over ~${span} s at load ${load}...`);
  const from = await Promise.all(servers.map((s) => readCounters(s.url)));
  const results = await directReplay(router, servers, CPU_POOL.chunkBytes, timed, (done) => {
    if (done % 50 === 0) console.error(`  ${done} done`);
  });
  const to = await Promise.all(servers.map((s) => readCounters(s.url)));
  const after = await idleSpeeds(cpu, "after");
  const stats = router.stats(performance.now());
  const rows = servers.map((s, i) => {
    const mine = results.filter((r) => r.ok && r.origin === s.id);
    const c = counterDelta(from[i] as (typeof from)[number], to[i] as (typeof to)[number]);
    const learned = stats.origins.find((o) => o.id === s.id)?.prefill;
    const { busy, alone, aloneRequests, line } = prefillSpeeds(mine);
    return {
      engine: s.id,
      requests: mine.length,
      learned: learned?.tokensPerSecond ?? Number.NaN,
      fixedMs: learned?.fixedMs ?? Number.NaN,
      samples: learned?.samples ?? 0,
      counters: c.promptTokens / c.promptSeconds,
      busy,
      alone,
      aloneRequests,
      line: line?.tokensPerSecond ?? null,
      lineFixedMs: line?.fixedMs ?? null,
      idle: ((before[i] as number) + (after[i] as number)) / 2,
    };
  });
  const failed = results.filter((r) => !r.ok).length;
  const f = (x: number | null) => (x === null || !Number.isFinite(x) ? "-" : x.toFixed(0));
  const ratio = (a: number | null, b: number | null) =>
    a === null || b === null || !(b > 0) ? "-" : (a / b).toFixed(2);
  console.log(
    `\nbench:speed: ${timed.length} requests (${failed} failed), ${count} llama-servers, ` +
      `${cpu.fleet.threads} thread(s), ${slots} slot(s) each, load ${load}; prompt tokens/s`,
  );
  console.log(
    "engine  requests  learned (F ms)  counters  busy  alone (n)  line (a ms)  idle | learned/counters  learned/line  counters/busy  line/counters",
  );
  for (const r of rows) {
    console.log(
      `${r.engine}  ${r.requests}  ${f(r.learned)} (${f(r.fixedMs)})  ${f(r.counters)}  ${f(r.busy)}  ` +
        `${f(r.alone)} (${r.aloneRequests})  ${f(r.line)} (${f(r.lineFixedMs)})  ${f(r.idle)} | ` +
        `${ratio(r.learned, r.counters)}  ${ratio(r.learned, r.line)}  ${ratio(r.counters, r.busy)}  ` +
        `${ratio(r.line, r.counters)}`,
    );
  }
  const json =
    values.json ?? join(root, `bench/results/speed-${count}e-${slots}s-${timed.length}r.json`);
  writeFile(
    json,
    toJson({ engines: count, slots, requests: timed.length, load, failed, rows, results }),
  );
  console.log(`\nwrote ${json}`);
} finally {
  await cpu?.fleet.stop();
}
