/**
 * `npm run engine -- --id gpu-a --port 9101 [--profile NAME] [--router URL] [--time-scale S]`
 * An OpenAI-compatible engine simulator. With `--router`, it also reports its load to the router
 * the way the reporter beside a real vLLM server does (signed with WEBHOOK_SECRET).
 */
import { parseArgs } from "node:util";
import { DEFAULT_PROFILE, PROFILES, profileNamed } from "../../sim/engine/profiles.ts";
import { runReporter } from "../reporter/reporter.ts";
import { startEngineServer } from "./engine-server.ts";

const usage =
  "usage: npm run engine -- --id ID --port PORT [--profile NAME] [--router URL] [--time-scale S] [--max-tokens N]\n" +
  `       profiles: ${Object.keys(PROFILES).join(", ")}`;

function fail(message: string): never {
  console.error(`engine: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    id: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    profile: { type: "string", default: DEFAULT_PROFILE },
    router: { type: "string" },
    "time-scale": { type: "string", default: "1" },
    "max-tokens": { type: "string", default: "16" },
    interval: { type: "string", default: "1000" },
  },
});
if (!values.id) fail("--id is required");
const port = Number(values.port);
const timeScale = Number(values["time-scale"]);
const maxTokens = Number(values["max-tokens"]);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  fail(`--port ${values.port} is not a port`);
if (!(timeScale > 0)) fail(`--time-scale ${values["time-scale"]} must be > 0`);
if (!Number.isInteger(maxTokens) || maxTokens < 1)
  fail(`--max-tokens ${values["max-tokens"]} must be >= 1`);
let profile: ReturnType<typeof profileNamed>;
try {
  profile = profileNamed(values.profile);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const engine = await startEngineServer({
  id: values.id,
  port,
  host: values.host,
  profile,
  timeScale,
  defaultMaxTokens: maxTokens,
});
console.log(`engine ${values.id}: ${engine.url} (${profile.name}, time x${timeScale})`);

const stop = new AbortController();
const shutdown = () => {
  stop.abort();
  void engine.close().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

if (values.router) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) fail("--router needs WEBHOOK_SECRET in the environment");
  void runReporter(
    {
      engine: engine.url,
      kind: "vllm",
      origin: values.id,
      router: values.router,
      secret,
      intervalMs: Number(values.interval),
      log: (line) => console.error(line),
    },
    stop.signal,
  );
}
