/**
 * The reporter loop: every interval, check the engine's `/health`, scrape its `/metrics`, turn
 * what changed into webhook events and deliver them, signed, to the router. Runs beside each
 * vLLM, SGLang or llama.cpp server (`npm run reporter`), and inside `npm start` beside each simulated engine.
 */
import { Delivery, type DeliveryOptions } from "./deliver.ts";
import { type EngineKind, readEngineMetrics } from "./engine-metrics.ts";
import { type Observation, ReporterState } from "./reporter-state.ts";

export interface ReporterOptions
  extends Omit<DeliveryOptions, "attempts" | "backoffMs" | "timeoutMs"> {
  engine: string;
  kind: EngineKind;
  intervalMs: number;
  log?: (line: string) => void;
}

async function look(
  engine: string,
  kind: EngineKind,
  timeoutMs: number,
  doFetch: typeof fetch,
): Promise<Observation> {
  try {
    const health = await doFetch(new URL("/health", engine), {
      signal: AbortSignal.timeout(timeoutMs),
    });
    await health.body?.cancel();
    if (!health.ok) return { ok: false };
  } catch {
    return { ok: false };
  }
  // Healthy from here: a scrape that fails or times out is no sign of trouble (llama-server
  // answers /metrics from its task queue, after the batch it is computing: seconds when it
  // prefills a long prompt).
  try {
    const metrics = await doFetch(new URL("/metrics", engine), {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!metrics.ok) return { ok: false, alive: true };
    return { ok: true, sample: readEngineMetrics(await metrics.text(), kind) };
  } catch {
    return { ok: false, alive: true };
  }
}

/** One look and one delivery; returns what was sent (for tests and `--once`). */
export function createReporter(options: ReporterOptions) {
  const timeoutMs = Math.max(200, Math.min(options.intervalMs, 5000));
  const state = new ReporterState();
  const delivery = new Delivery({ ...options, attempts: 3, backoffMs: 200, timeoutMs });
  const log = options.log ?? (() => {});
  return {
    delivery,
    async tick() {
      const observation = await look(
        options.engine,
        options.kind,
        timeoutMs,
        options.fetch ?? fetch,
      );
      const events = state.observe(observation);
      for (const e of events) if (e.type !== "load") log(`${options.origin}: ${JSON.stringify(e)}`);
      const result = await delivery.send(events);
      if (!result.ok)
        log(
          `${options.origin}: delivery failed (${result.status ?? "network"}): ${result.message}`,
        );
      return { observation, events, result };
    },
  };
}

/** Tick every interval until the signal aborts. */
export async function runReporter(options: ReporterOptions, signal: AbortSignal): Promise<void> {
  const reporter = createReporter(options);
  while (!signal.aborted) {
    const started = Date.now();
    await reporter.tick();
    const wait = Math.max(0, options.intervalMs - (Date.now() - started));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
