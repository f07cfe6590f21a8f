/**
 * `npm run reporter -- --engine http://127.0.0.1:8000 --kind vllm|sglang|llamacpp --origin gpu-a
 *   --router https://llm.example.com [--interval 1s] [--once]`
 * The webhook secret comes from the WEBHOOK_SECRET environment variable, never a flag (flags
 * show up in process lists).
 */
import { commandLine } from "../../sim/cli/cli-args.ts";
import { parseDuration } from "../shared/parse-duration.ts";
import { ENGINE_KINDS, type EngineKind } from "./engine-metrics.ts";
import { createReporter, runReporter } from "./reporter.ts";

const usage =
  "usage: npm run reporter -- --engine URL --kind vllm|sglang|llamacpp --origin ID --router URL [--interval 1s] [--once]\n" +
  "       (secret from WEBHOOK_SECRET)";

function fail(message: string): never {
  console.error(`reporter: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("reporter", usage, {
  options: {
    engine: { type: "string" },
    kind: { type: "string", default: "vllm" },
    origin: { type: "string" },
    router: { type: "string" },
    interval: { type: "string", default: "1s" },
    once: { type: "boolean", default: false },
  },
});
const secret = process.env.WEBHOOK_SECRET;
if (!values.engine || !values.origin || !values.router)
  fail("--engine, --origin and --router are required");
if (!(ENGINE_KINDS as readonly string[]).includes(values.kind))
  fail(`--kind must be one of ${ENGINE_KINDS.join(", ")}, not ${values.kind}`);
if (!secret) fail("WEBHOOK_SECRET is not set");
const intervalMs = parseDuration(values.interval);
if (intervalMs === null || intervalMs < 100)
  fail(`--interval ${values.interval} is not a duration >= 100ms`);

const options = {
  engine: values.engine,
  kind: values.kind as EngineKind,
  origin: values.origin,
  router: values.router,
  secret,
  intervalMs,
  log: (line: string) => console.error(`${new Date().toISOString()} ${line}`),
};

if (values.once) {
  const { events, result } = await createReporter(options).tick();
  console.log(JSON.stringify({ events, delivered: result.ok }));
  process.exit(result.ok ? 0 : 1);
}
const stop = new AbortController();
process.on("SIGINT", () => stop.abort());
process.on("SIGTERM", () => stop.abort());
options.log(
  `${options.origin}: reporting ${options.engine} (${options.kind}) to ${options.router} every ${intervalMs} ms`,
);
await runReporter(options, stop.signal);
