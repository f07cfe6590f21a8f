/**
 * The whole router running locally: N simulated engines (OpenAI-compatible HTTP servers over the
 * simulator's engine model), `wrangler dev` (the real Worker and Durable Object, local KV and
 * storage), and a reporter per engine posting signed load webhooks to the router, exactly as in
 * production. Used by `npm start` and by the end-to-end tests.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import type { SettingsInput } from "../../src/core/settings/settings-schema.ts";
import { type RunningEngine, startEngineServer } from "../engine/engine-server.ts";
import { runReporter } from "../reporter/reporter.ts";
import { type DevSecrets, ensureDevVars } from "./dev-vars.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

export interface StackOptions {
  /** Project root (where wrangler.toml is). */
  root: string;
  origins: number;
  profile: EngineProfile;
  /** Simulated GPU time runs this many times faster than the wall clock. */
  timeScale: number;
  /** Where wrangler dev keeps local KV and Durable Object storage. */
  persistTo: string;
  /** Secrets file for wrangler dev; created with random tokens if missing. */
  devVars?: string;
  reportIntervalMs?: number;
  log?: (line: string) => void;
}

export interface StackEngine {
  id: string;
  url: string;
  running: RunningEngine | null;
}

export interface Stack {
  routerUrl: string;
  secrets: DevSecrets;
  engines: StackEngine[];
  /** Origin settings for a pool over this stack's engines (speeds in wall-clock terms). */
  originSettings(): NonNullable<SettingsInput["pools"][string]>["origins"];
  putSettings(doc: SettingsInput): Promise<void>;
  /** Stop one engine abruptly (its port then refuses connections). */
  killEngine(id: string): Promise<void>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const secrets = ensureDevVars(options.devVars ?? join(options.root, ".dev.vars"));
  const stopReporters = new AbortController();
  const engines: StackEngine[] = [];
  let wrangler: WranglerDev | null = null;
  const stop = async () => {
    stopReporters.abort();
    await Promise.all(engines.map((e) => e.running?.close()));
    for (const e of engines) e.running = null;
    await wrangler?.stop();
  };
  try {
    for (let i = 0; i < options.origins; i++) {
      const id = `gpu-${String.fromCharCode(97 + i)}`;
      const running = await startEngineServer({
        id,
        port: 0,
        profile: options.profile,
        timeScale: options.timeScale,
      });
      engines.push({ id, url: running.url, running });
    }
    wrangler = await startWranglerDev({
      cwd: options.root,
      port: await freePort(),
      persistTo: options.persistTo,
      envFile: options.devVars ?? join(options.root, ".dev.vars"),
      log: options.log,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const routerUrl = wrangler.url;
  for (const e of engines) {
    void runReporter(
      {
        engine: e.url,
        kind: "vllm",
        origin: e.id,
        router: routerUrl,
        secret: secrets.WEBHOOK_SECRET,
        intervalMs: options.reportIntervalMs ?? 500,
        log: options.log,
      },
      stopReporters.signal,
    );
  }
  return {
    routerUrl,
    secrets,
    engines,
    originSettings: () =>
      engines.map((e) => ({
        id: e.id,
        url: e.url,
        kvCapacityTokens: options.profile.kvCapacityTokens,
        prefillTokensPerSecond: Math.round(
          options.profile.prefillTokensPerSecond * options.timeScale,
        ),
      })),
    async putSettings(doc) {
      const res = await fetch(`${routerUrl}/admin/settings`, {
        method: "PUT",
        headers: {
          authorization: `Bearer ${secrets.ADMIN_TOKEN}`,
          "content-type": "application/json",
        },
        body: JSON.stringify(doc),
      });
      if (!res.ok) throw new Error(`PUT /admin/settings: ${res.status} ${await res.text()}`);
    },
    async killEngine(id) {
      const e = engines.find((x) => x.id === id);
      await e?.running?.close();
      if (e) e.running = null;
    },
    stop,
  };
}
