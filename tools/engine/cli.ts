/**
 * `npm run engine -- --id gpu-a --port 9101 [--profile NAME] [--router URL] [--time-scale S]`
 * An engine simulator speaking chat and text completions, Anthropic Messages and OpenAI
 * Responses (engine-server.ts). With `--router`, it also reports its load to the router
 * the way the reporter beside a real vLLM server does (signed with WEBHOOK_SECRET).
 * With `--pd vllm-nixl|sglang --role prefill|decode`, it is one side of a disaggregated pair
 * (pd/pd-role.ts); the prefill side prints the private address its decode engines dial.
 */

import { commandLine } from "../../sim/cli/cli-args.ts";
import { DEFAULT_PROFILE, PROFILES, profileNamed } from "../../sim/engine/profiles.ts";
import { runReporter } from "../reporter/reporter.ts";
import { parseDuration } from "../shared/parse-duration.ts";
import { startEngineServer } from "./engine-server.ts";
import type { PdEngineOptions } from "./pd/pd-engine.ts";

const usage =
  "usage: npm run engine -- --id ID --port PORT [--profile NAME] [--router URL] [--time-scale S] [--max-tokens N]\n" +
  "         [--pd vllm-nixl|sglang --role prefill|decode] [--kv-lease 30s] [--kv-load-failure-policy fail|recompute]\n" +
  "         [--side-channel-host H] [--side-channel-port P] [--bootstrap-port P] [--bootstrap-timeout 30s]\n" +
  `       profiles: ${Object.keys(PROFILES).join(", ")}`;

function fail(message: string): never {
  console.error(`engine: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = commandLine("engine", usage, {
  options: {
    id: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    profile: { type: "string", default: DEFAULT_PROFILE },
    router: { type: "string" },
    "time-scale": { type: "string", default: "1" },
    "max-tokens": { type: "string", default: "16" },
    interval: { type: "string", default: "1000" },
    pd: { type: "string" },
    role: { type: "string" },
    "kv-lease": { type: "string", default: "30s" },
    "kv-load-failure-policy": { type: "string", default: "fail" },
    "side-channel-host": { type: "string", default: "localhost" },
    "side-channel-port": { type: "string", default: "0" },
    "bootstrap-port": { type: "string", default: "0" },
    "bootstrap-timeout": { type: "string", default: "30s" },
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
const pd = pdOptions();
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
  pd,
  log: (line) => console.error(`engine ${values.id}: ${line}`),
});
const role = pd ? `, ${pd.protocol} ${pd.role}` : "";
console.log(`engine ${values.id}: ${engine.url} (${profile.name}, time x${timeScale}${role})`);
if (engine.pd?.endpoint) console.log(`engine ${values.id}: engines dial ${engine.pd.endpoint}`);

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

function pdOptions(): PdEngineOptions | undefined {
  const { pd: protocol, role } = values;
  if (protocol === undefined && role === undefined) return undefined;
  if (protocol !== "vllm-nixl" && protocol !== "sglang")
    fail(`--pd ${protocol ?? "(missing)"} must be vllm-nixl or sglang`);
  if (role !== "prefill" && role !== "decode")
    fail(`--role ${role ?? "(missing)"} must be prefill or decode`);
  const policy = values["kv-load-failure-policy"];
  if (policy !== "fail" && policy !== "recompute")
    fail(`--kv-load-failure-policy ${policy} must be fail or recompute`);
  const ms = (flag: "kv-lease" | "bootstrap-timeout") =>
    parseDuration(values[flag]) ?? fail(`--${flag} ${values[flag]} is not a duration`);
  const port = (flag: "side-channel-port" | "bootstrap-port") => {
    const n = Number(values[flag]);
    return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : fail(`--${flag} is not a port`);
  };
  return {
    protocol,
    role,
    kvLeaseMs: ms("kv-lease"),
    loadFailurePolicy: policy,
    sideChannelHost: values["side-channel-host"],
    sideChannelPort: port("side-channel-port"),
    bootstrapPort: port("bootstrap-port"),
    bootstrapTimeoutMs: ms("bootstrap-timeout"),
  };
}
