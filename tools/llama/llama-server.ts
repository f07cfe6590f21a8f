/**
 * llama.cpp's `llama-server` as a child process: found through `LLAMA_SERVER` or PATH, started
 * on 127.0.0.1 with its Prometheus metrics on and its web UI off, ready once `/health` answers
 * 200. Each server runs in its own process group, stopped (or killed, for crash tests) as a whole;
 * a restart brings it back on the same port with an empty prompt cache.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { freePort } from "../local-stack/stack.ts";
import { stopChild } from "../local-stack/wrangler-dev.ts";
import { outputTail } from "../shared/output-tail.ts";

export interface LlamaServer {
  id: string;
  url: string;
  port: number;
  /** SIGTERM to its process group, SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGKILL now, for crash tests (its port then refuses connections). */
  kill(): void;
  /** Stops it if running, then starts it again on the same port: its prompt cache is empty. */
  restart(): Promise<void>;
}

export interface LlamaServerOptions {
  binary: string;
  /** A GGUF model file (see `ensureModel`). */
  model: string;
  /** Names the server in log lines and in the router's settings. */
  id: string;
  /** Default: a free port. */
  port?: number;
  /** CPU threads (`-t`); default 1. */
  threads?: number;
  /** Parallel slots (`-np`), each keeping its last prompt; default 1. */
  slots?: number;
  /** Context tokens for all slots together (`-c`); default the model's. */
  ctxTokens?: number;
  /** Host-memory prompt cache (`--cache-ram`, MiB); default llama-server's (8192). */
  cacheRamMiB?: number;
  extraArgs?: string[];
  /** Receives the server's output lines, prefixed with its id. */
  log?: (line: string) => void;
  /** How long to wait for `/health`; default 30 s. */
  startTimeoutMs?: number;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The llama-server binary from `LLAMA_SERVER`, else the first `llama-server` on PATH. */
export function findLlamaServer(): { path: string } | { missing: string } {
  const fromEnv = process.env.LLAMA_SERVER;
  if (fromEnv) {
    return isExecutableFile(fromEnv)
      ? { path: fromEnv }
      : { missing: `LLAMA_SERVER=${fromEnv} is not an executable file` };
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir || ".", "llama-server");
    if (dir && isExecutableFile(candidate)) return { path: candidate };
  }
  return { missing: "no llama-server: LLAMA_SERVER is unset and PATH has none" };
}

function serverArgs(opts: LlamaServerOptions, port: number): string[] {
  const args = ["-m", opts.model, "--host", "127.0.0.1", "--port", String(port)];
  args.push("-t", String(opts.threads ?? 1), "-np", String(opts.slots ?? 1));
  if (opts.ctxTokens !== undefined) args.push("-c", String(opts.ctxTokens));
  if (opts.cacheRamMiB !== undefined) args.push("--cache-ram", String(opts.cacheRamMiB));
  args.push("--metrics", "--no-webui", ...(opts.extraArgs ?? []));
  return args;
}

/** Spawns the server and waits for `/health` 200; on failure, kills it and throws its last lines. */
async function launch(opts: LlamaServerOptions, port: number): Promise<ChildProcess> {
  const child = spawn(opts.binary, serverArgs(opts, port), {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = outputTail(child, 50, opts.log && ((line) => opts.log?.(`[${opts.id}] ${line}`)));
  const spawnError = new Promise<Error>((r) => child.once("error", r));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    const failed = await Promise.race([spawnError, new Promise((r) => setTimeout(r, 100))]);
    if (failed instanceof Error) throw new Error(`llama-server ${opts.id}: ${failed.message}`);
  }
  await stopChild(child);
  throw new Error(
    `llama-server ${opts.id} did not become healthy on ${url}:\n${output.slice(-20).join("\n")}`,
  );
}

export async function startLlamaServer(opts: LlamaServerOptions): Promise<LlamaServer> {
  const port = opts.port ?? (await freePort());
  let child: ChildProcess | null = await launch(opts, port);
  const stop = async () => {
    const running = child;
    child = null;
    if (running && running.signalCode === null) await stopChild(running);
  };
  return {
    id: opts.id,
    url: `http://127.0.0.1:${port}`,
    port,
    stop,
    kill() {
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    async restart() {
      await stop();
      child = await launch(opts, port);
    },
  };
}
