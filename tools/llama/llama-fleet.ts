/**
 * N real llama-servers for the local stack (`npm start -- --engines llama`, `npm run bench:real`):
 * the project's bench model, CPU threads shared out over the machine's cores, and a reporter
 * per engine (`--kind llamacpp`) posting its load, restarts and measured prefill speed to the
 * router, as one would run beside each engine in production.
 */
import { availableParallelism } from "node:os";
import type { ExternalEngine } from "../local-stack/stack.ts";
import { runReporter } from "../reporter/reporter.ts";
import { type LlamaServer, startLlamaServer } from "./llama-server.ts";

export interface LlamaFleetOptions {
  binary: string;
  model: string;
  count: number;
  /** CPU threads per engine (`-t`); default `threadsPerEngine(count)`. */
  threads?: number;
  /** Parallel slots per engine (`-np`). */
  slots: number;
  /** Context tokens per engine, all slots together (`-c`). */
  ctxTokens: number;
  /** Host-memory prompt cache per engine (`--cache-ram`, MiB). */
  cacheRamMiB: number;
  /** Origin settings' prefill speed, router tokens per second (the engines' measured). */
  prefillTokensPerSecond?: number;
  /** Origin settings' cache size, router tokens (what `--cache-ram` and the slots hold). */
  kvCapacityTokens?: number;
  log?: (line: string) => void;
}

export interface LlamaFleet {
  readonly servers: readonly LlamaServer[];
  readonly threads: number;
  /** The engines as the stack's `external` origins. */
  external(): ExternalEngine[];
  /** Start a reporter per engine posting to `routerUrl` until `stop`. */
  report(routerUrl: string, secret: string, intervalMs?: number): void;
  /** Restart every engine (same ports, empty prompt caches). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** `max(1, floor(cores / engines))`: the engines share the machine without oversubscribing it. */
export function threadsPerEngine(engines: number, cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / engines));
}

/** `cpu-a`, `cpu-b`, ... */
export function llamaEngineId(i: number): string {
  return `cpu-${String.fromCharCode(97 + i)}`;
}

export async function startLlamaFleet(o: LlamaFleetOptions): Promise<LlamaFleet> {
  const threads = o.threads ?? threadsPerEngine(o.count);
  const servers: LlamaServer[] = [];
  const reporters = new AbortController();
  const stop = async () => {
    reporters.abort();
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    // One at a time: model loads on a shared machine are slow enough without competing.
    for (let i = 0; i < o.count; i++) {
      servers.push(
        await startLlamaServer({
          binary: o.binary,
          model: o.model,
          id: llamaEngineId(i),
          threads,
          slots: o.slots,
          ctxTokens: o.ctxTokens,
          cacheRamMiB: o.cacheRamMiB,
          log: o.log,
          startTimeoutMs: 60_000,
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    servers,
    threads,
    external: () =>
      servers.map((s) => ({
        id: s.id,
        url: s.url,
        ...(o.prefillTokensPerSecond ? { prefillTokensPerSecond: o.prefillTokensPerSecond } : {}),
        ...(o.kvCapacityTokens ? { kvCapacityTokens: o.kvCapacityTokens } : {}),
      })),
    report(routerUrl, secret, intervalMs = 500) {
      for (const s of servers) {
        void runReporter(
          {
            engine: s.url,
            kind: "llamacpp",
            origin: s.id,
            router: routerUrl,
            secret,
            intervalMs,
            log: o.log,
          },
          reporters.signal,
        );
      }
    },
    async restart() {
      for (const s of servers) await s.restart();
    },
    stop,
  };
}
