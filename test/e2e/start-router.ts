/**
 * The real Worker for end-to-end tests, started with wrangler's programmatic API
 * (`unstable_startWorker`, wrangler 4): this repository's wrangler.toml and entry point, the
 * Durable Object and KV simulated locally by workerd, state in a temporary directory, secrets
 * passed as bindings (no .dev.vars needed or read over them), no inspector, no file watching.
 */
import { createServer } from "node:net";
import { resolve } from "node:path";
import { unstable_startWorker } from "wrangler";

export interface RouterSecrets {
  ADMIN_TOKEN: string;
  WEBHOOK_SECRET: string;
  METRICS_TOKEN: string;
}

export interface LocalRouter {
  readonly url: string;
  dispose(): Promise<void>;
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

export async function startRouter(
  root: string,
  persistTo: string,
  secrets: RouterSecrets,
): Promise<LocalRouter> {
  // No telemetry or update check: the test must not need the network.
  process.env.WRANGLER_SEND_METRICS = "false";
  const secret = (value: string) => ({ type: "secret_text" as const, value });
  const worker = await unstable_startWorker({
    config: resolve(root, "wrangler.toml"),
    bindings: {
      ADMIN_TOKEN: secret(secrets.ADMIN_TOKEN),
      WEBHOOK_SECRET: secret(secrets.WEBHOOK_SECRET),
      METRICS_TOKEN: secret(secrets.METRICS_TOKEN),
      SETTINGS_CACHE_MS: { type: "plain_text", value: "200" },
    },
    dev: {
      server: { hostname: "127.0.0.1", port: await freePort() },
      inspector: false,
      persist: persistTo,
      watch: false,
      logLevel: "warn",
    },
  });
  try {
    await worker.ready;
    const url = (await worker.url).origin;
    return { url, dispose: () => worker.dispose() };
  } catch (error) {
    await worker.dispose();
    throw error;
  }
}
