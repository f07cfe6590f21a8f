/**
 * The whole router running locally: N simulated engines (OpenAI-compatible HTTP servers over the
 * simulator's engine model), `wrangler dev` (the real Worker and Durable Object, local KV and
 * storage), and a reporter per engine posting signed load webhooks to the router, exactly as in
 * production. Used by `npm start` and by the end-to-end tests. Engines may be sides of P/D pairs
 * (`engines`, `pdFleet`): their origin settings then carry the role and protocol. The stack can
 * also front engines it did not start (`external`, e.g. real llama-servers): they join the origin
 * settings, and whoever started them stops them.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import type { SettingsInput } from "../../src/core/settings/settings-schema.ts";
import { type RunningEngine, startEngineServer } from "../engine/engine-server.ts";
import type { PdEngineOptions } from "../engine/pd/pd-engine.ts";
import type { PdProtocol } from "../engine/pd/pd-role.ts";
import { runReporter } from "../reporter/reporter.ts";
import { type DevSecrets, ensureDevVars } from "./dev-vars.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

/** One engine of the stack: its id, and its side of a P/D pair if it has one. */
export interface EngineSpec {
  readonly id: string;
  readonly pd?: PdEngineOptions;
}

/** An engine the stack fronts but did not start (no reporter of the stack's posts its load). */
export interface ExternalEngine {
  readonly id: string;
  readonly url: string;
  /** Its origin settings' speed; default the pool's. */
  readonly prefillTokensPerSecond?: number;
  /** Its origin settings' cache size; default the pool's (engine-reported cached tokens correct it). */
  readonly kvCapacityTokens?: number;
}

export interface StackOptions {
  /** Project root (where wrangler.toml is). */
  root: string;
  /** Engines `gpu-a`, `gpu-b`, ... that serve whole requests, unless `engines` says otherwise. */
  origins: number;
  engines?: readonly EngineSpec[];
  /** Engines already running elsewhere, after the simulated ones in `originSettings()`. */
  external?: readonly ExternalEngine[];
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
  pd?: PdEngineOptions;
  /** A P/D prefill engine's private address (side channel, bootstrap server). */
  endpoint: string | null;
}

export interface Stack {
  routerUrl: string;
  secrets: DevSecrets;
  engines: StackEngine[];
  /**
   * Origin settings for a pool over this stack's engines (speeds in wall-clock terms), all of
   * them or those `ids` names, simulated then external; a P/D engine's say its role and protocol.
   */
  originSettings(ids?: readonly string[]): OriginInput[];
  putSettings(doc: SettingsInput): Promise<void>;
  /** Stop one engine abruptly (its port then refuses connections). */
  killEngine(id: string): Promise<void>;
  stop(): Promise<void>;
}

type OriginInput = NonNullable<SettingsInput["pools"][string]>["origins"][number];

/** A P/D fleet of `count` engines: one prefill engine in four (at least one), decode the rest. */
export function pdFleet(count: number, protocol: PdProtocol): EngineSpec[] {
  const prefill = Math.max(1, Math.round(count / 4));
  const letter = (i: number) => String.fromCharCode(97 + i);
  return Array.from({ length: Math.max(count, 2) }, (_, i) =>
    i < prefill
      ? { id: `prefill-${letter(i)}`, pd: { protocol, role: "prefill" } }
      : { id: `decode-${letter(i - prefill)}`, pd: { protocol, role: "decode" } },
  );
}

/** The role and `pd` block of a P/D engine's origin settings. */
function pdSettings(e: StackEngine): Partial<OriginInput> {
  if (!e.pd) return {};
  const { protocol, role } = e.pd;
  const port = Number(e.endpoint?.split(":").at(-1));
  const bootstrap = protocol === "sglang" && role === "prefill" ? { bootstrapPort: port } : {};
  return { role, pd: { protocol, ...bootstrap } };
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
    const specs: readonly EngineSpec[] =
      options.engines ??
      Array.from({ length: options.origins }, (_, i) => ({
        id: `gpu-${String.fromCharCode(97 + i)}`,
      }));
    for (const { id, pd } of specs) {
      const running = await startEngineServer({
        id,
        port: 0,
        profile: options.profile,
        timeScale: options.timeScale,
        pd,
        log: options.log,
      });
      const endpoint = running.pd?.endpoint ?? null;
      engines.push({ id, url: running.url, running, pd, endpoint });
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
    originSettings: (ids) => {
      const wanted = (id: string) => ids === undefined || ids.includes(id);
      const simulated: OriginInput[] = engines
        .filter((e) => wanted(e.id))
        .map((e) => ({
          id: e.id,
          url: e.url,
          kvCapacityTokens: options.profile.kvCapacityTokens,
          prefillTokensPerSecond: Math.round(
            options.profile.prefillTokensPerSecond * options.timeScale,
          ),
          ...pdSettings(e),
        }));
      const external: OriginInput[] = (options.external ?? [])
        .filter((e) => wanted(e.id))
        .map(({ id, url, prefillTokensPerSecond, kvCapacityTokens }) => ({
          id,
          url,
          ...(prefillTokensPerSecond !== undefined ? { prefillTokensPerSecond } : {}),
          ...(kvCapacityTokens !== undefined ? { kvCapacityTokens } : {}),
        }));
      return [...simulated, ...external];
    },
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
