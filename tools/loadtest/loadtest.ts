/**
 * `npm run loadtest`: what the router costs, measured against the local stack on loopback.
 * In one run, each for `--duration` under `--concurrency` closed-loop clients (autocannon):
 * - direct:       the same chat request straight to a fast origin (answers at once, own process);
 * - routed:MODE:  that request through the router in `wrangler dev` (Worker, routing, forward to
 *                 the same origin), once per coordination mode, each mode its own pool
 *                 (coordination.ts: `object`, the pool's Durable Object decides; `edge`, the
 *                 isolate's replica does);
 * - healthz:      `GET /healthz` through the same `wrangler dev`, the platform's floor
 *                 (wrangler's proxy, workerd, Hono) with no routing.
 * With `--rounds N` every target runs N times, round after round (the routed modes' order
 * rotating), and each target's rounds are combined: on a shared machine whose load drifts,
 * no mode gets all the quiet minutes.
 * Prints requests/s, p50/p99, errors and wrangler dev's CPU per request (process-cpu.ts) per
 * target, each mode's overhead (routed - direct, routed / direct, and routed - direct - healthz:
 * its own cost) and each mode against the first, and saves JSON to
 * bench/results/loadtest.json. Everything it starts is stopped on exit, failure or Ctrl-C.
 *
 *   npm run loadtest -- [--duration 10s] [--warmup 2s] [--concurrency 16] [--stream]
 *                       [--coordination object,edge] [--rounds 1]
 *                       [--out bench/results/loadtest.json]
 */

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { commandLine } from "../../sim/cli/cli-args.ts";
import { ensureDevVars } from "../local-stack/dev-vars.ts";
import { freePort } from "../local-stack/stack.ts";
import { startWranglerDev, stopChild, type WranglerDev } from "../local-stack/wrangler-dev.ts";
import { parseDuration } from "../shared/parse-duration.ts";
import { COORDINATIONS } from "./coordination.ts";
import { combine, type Measurement, measure, type Target, type TargetResult } from "./measure.ts";
import { groupCpuMs } from "./process-cpu.ts";
import { formatReport, overhead } from "./report.ts";

const root = resolve(import.meta.dirname, "../..");
const usage =
  "usage: npm run loadtest -- [--duration 10s] [--warmup 2s] [--concurrency 16] [--stream]\n" +
  `       [--coordination ${Object.keys(COORDINATIONS).join(",")}] [--rounds N] [--out PATH]`;
/** Each mode's pool. */
const modelOf = (mode: string) => `loadtest-${mode}`;

function fail(message: string): never {
  console.error(`loadtest: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("loadtest", usage, {
  options: {
    duration: { type: "string", default: "10s" },
    warmup: { type: "string", default: "2s" },
    concurrency: { type: "string", default: "16" },
    stream: { type: "boolean", default: false },
    coordination: { type: "string", default: "object,edge" },
    rounds: { type: "string", default: "1" },
    out: { type: "string", default: join(root, "bench/results/loadtest.json") },
  },
});
const durationMs = parseDuration(values.duration);
const warmupMs = parseDuration(values.warmup);
const concurrency = Number(values.concurrency);
const modes = values.coordination.split(",").map((m) => m.trim());
const rounds = Number(values.rounds);
if (durationMs === null || durationMs < 1000) fail(`--duration ${values.duration}: at least 1s`);
if (warmupMs === null) fail(`--warmup ${values.warmup} is not a duration`);
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024)
  fail(`--concurrency ${values.concurrency} must be 1..1024`);
for (const mode of modes) if (!COORDINATIONS[mode]) fail(`unknown --coordination ${mode}`);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100)
  fail(`--rounds ${values.rounds}: 1..100`);

// Everything this run starts, so that every way out stops it.
const children = new Set<ChildProcess>();
let wrangler: WranglerDev | null = null;
let stopping: Promise<void> | null = null;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...children].map((child) => stopChild(child)));
    await wrangler?.stop();
  })();
  return stopping;
}
// Last resort when the process exits without the async stop having finished.
process.on("exit", () => {
  for (const child of [...children, wrangler?.child]) {
    if (child?.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
});
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const) {
  process.on(signal, () => {
    console.error(`\nloadtest: ${signal}, stopping everything`);
    void stopAll().finally(() => process.exit(code));
  });
}

/** The fast origin in its own process group; resolves with its URL once it listens. */
async function startOriginProcess(): Promise<string> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "fast-origin-process.ts")], {
    stdio: ["pipe", "pipe", "inherit"],
    detached: true,
  });
  children.add(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`fast origin exited (${code})`)));
    setTimeout(() => reject(new Error("fast origin did not start in 10 s")), 10_000).unref();
  });
  return (JSON.parse(await first) as { url: string }).url;
}

function chatBody(model: string, stream: boolean): string {
  const system = "You are a concise assistant for the load test of an LLM router. ".repeat(24);
  return JSON.stringify({
    model,
    messages: [
      { role: "system", content: system },
      { role: "user", content: "Say ok." },
    ],
    max_tokens: 1,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

async function run(): Promise<void> {
  const devVars = join(root, ".dev.vars");
  const secrets = ensureDevVars(devVars);
  const persistTo = join(root, ".wrangler/loadtest-state");
  rmSync(persistTo, { recursive: true, force: true });
  console.error("starting the fast origin and wrangler dev (loopback only)...");
  const originUrl = await startOriginProcess();
  wrangler = await startWranglerDev({
    cwd: root,
    port: await freePort(),
    persistTo,
    envFile: devVars,
  });
  const routerUrl = wrangler.url;
  // wrangler dev is started in a process group of its own: its workerd and Node processes.
  const wranglerGroup = wrangler.child.pid ?? -1;
  const pools = Object.fromEntries(
    modes.map((mode) => [modelOf(mode), COORDINATIONS[mode]?.pool(originUrl)]),
  );
  const put = await fetch(`${routerUrl}/admin/settings`, {
    method: "PUT",
    headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}` },
    body: JSON.stringify({ pools }),
  });
  if (!put.ok) throw new Error(`PUT /admin/settings: ${put.status} ${await put.text()}`);

  const headers = { "content-type": "application/json" };
  const path = "/v1/chat/completions";
  const direct = chatBody(modelOf(modes[0] as string), values.stream);
  const routed: Target[] = modes.map((mode) => ({
    name: `routed:${mode}`,
    url: `${routerUrl}${path}`,
    method: "POST",
    headers,
    body: chatBody(modelOf(mode), values.stream),
  }));
  const targets: Target[] = [
    { name: "direct", url: `${originUrl}${path}`, method: "POST", headers, body: direct },
    { name: "healthz", url: `${routerUrl}/healthz`, method: "GET" },
    ...routed,
  ];
  // One request per mode first: a misconfigured stack fails here, not as a table of errors.
  for (const target of routed) {
    const probe = await fetch(target.url, { method: "POST", headers, body: target.body });
    const probeText = await probe.text();
    if (probe.status !== 200 || probe.headers.get("x-router-origin") === null) {
      throw new Error(`${target.name} probe: ${probe.status} ${probeText.slice(0, 300)}`);
    }
  }

  const runs = new Map<string, Measurement[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    const turn = routed.map((_, i) => routed[(i + round) % routed.length] as Target);
    for (const target of [...targets.slice(0, 2), ...turn]) {
      console.error(`round ${round + 1}/${rounds} ${target.name}: ${target.method} ${target.url}`);
      if (warmupMs && warmupMs > 0)
        await measure(target, { durationMs: warmupMs, connections: concurrency });
      const run = await measure(target, {
        durationMs: durationMs as number,
        connections: concurrency,
        cpu: () => groupCpuMs(wranglerGroup),
      });
      runs.get(target.name)?.push(run);
    }
  }
  const results = targets.map((t) => combine(runs.get(t.name) ?? []));
  const [directResult, healthz, ...routedResults] = results as [
    TargetResult,
    TargetResult,
    ...TargetResult[],
  ];
  const costs = routedResults.map((r) => ({
    name: r.name,
    overhead: overhead(directResult, r, healthz),
  }));
  console.log(`\n${formatReport(results, costs)}`);
  console.log(
    `\n${concurrency} connections, ${values.duration} per target and round after ${values.warmup} ` +
      `warm-up, ${rounds} round(s), ` +
      `${values.stream ? "streamed" : "JSON"} answers, ${cpus().length} CPUs, load generator in ` +
      `this process, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at the end.\n` +
      modes.map((m) => `coordination ${m}: ${COORDINATIONS[m]?.describe}`).join("\n"),
  );
  const out = resolve(values.out);
  mkdirSync(dirname(out), { recursive: true });
  const meta = {
    date: new Date().toISOString(),
    loadAverage: loadavg(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
  };
  const options = {
    durationMs,
    warmupMs,
    concurrency,
    rounds,
    stream: values.stream,
    coordination: modes,
    requestBytes: Buffer.byteLength(direct),
  };
  writeFileSync(
    out,
    `${JSON.stringify({ meta, options, targets: results, overhead: costs }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);
}

let code = 0;
try {
  await run();
} catch (error) {
  console.error(`loadtest: ${error instanceof Error ? error.message : String(error)}`);
  code = 1;
} finally {
  await stopAll();
}
process.exit(code);
