/**
 * `wrangler dev` as a child process: the real Worker and Durable Object in local workerd, with
 * local KV and storage persisted to its own directory. Resolves once `/healthz` answers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { outputTail } from "../shared/output-tail.ts";

export interface WranglerDev {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface WranglerDevOptions {
  cwd: string;
  port: number;
  persistTo: string;
  /** A file of secrets (KEY=value lines) for the Worker. */
  envFile: string;
  timeoutMs?: number;
  /** Receives wrangler's own output lines (e.g. to show them on failure). */
  log?: (line: string) => void;
}

export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  const args = [
    "wrangler",
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(options.port),
    "--persist-to",
    options.persistTo,
    "--env-file",
    options.envFile,
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
  ];
  const child = spawn("npx", args, {
    cwd: options.cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output = outputTail(child, 200, options.log);
  const url = `http://127.0.0.1:${options.port}`;
  const stop = () => stopChild(child);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return { url, child, stop };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not start on ${url}:\n${output.slice(-30).join("\n")}`);
}

/** Stop a detached child and everything it started (wrangler runs workerd as a grandchild). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}
