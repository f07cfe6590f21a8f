/**
 * One target under closed-loop load: `connections` clients each send the same request again as
 * soon as the last one is answered, for `durationMs`, with autocannon generating the load.
 * Latencies are taken from autocannon's per-response event (float ms from hrtime) rather than
 * its histogram, whose 1 ms resolution cannot show a sub-millisecond origin.
 */
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { cpuSpent } from "./process-cpu.ts";
import { type LatencySummary, summariseLatencies } from "./report.ts";

export interface Target {
  /** `direct`, `routed` or `healthz`. */
  name: string;
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  durationMs: number;
  connections: number;
  /** Per-request timeout; a request past it counts as an error. */
  timeoutMs?: number;
  /** CPU ms so far of the stack's processes by command (process-cpu.ts), null if unknown. */
  cpu?: () => Record<string, number> | null;
}

export interface TargetResult {
  name: string;
  url: string;
  connections: number;
  durationS: number;
  /** 2xx answers. */
  ok: number;
  /** Non-2xx answers plus connection errors and timeouts. */
  errors: number;
  /** 2xx answers per second. */
  requestsPerSecond: number;
  /** Over 2xx answers only. */
  latencyMs: LatencySummary;
  /** CPU ms the stack's processes spent during the run, by command; null if unknown. */
  cpuMs: Record<string, number> | null;
}

/** A run's result and its latencies, so several runs of one target can be combined. */
export interface Measurement {
  readonly result: TargetResult;
  readonly latencies: readonly number[];
}

/** Runs of one target (rounds of a noisy machine) as one result: every answer, the total time. */
export function combine(runs: readonly Measurement[]): TargetResult {
  const first = runs[0]?.result;
  if (!first) throw new Error("combine: no runs");
  const latencies = runs.flatMap((r) => r.latencies);
  const durationS = runs.reduce((s, r) => s + r.result.durationS, 0);
  return {
    ...first,
    durationS,
    ok: latencies.length,
    errors: runs.reduce((s, r) => s + r.result.errors, 0),
    requestsPerSecond: latencies.length / durationS,
    latencyMs: summariseLatencies(latencies),
    cpuMs: sumCpu(runs.map((r) => r.result.cpuMs)),
  };
}

function sumCpu(runs: readonly (Record<string, number> | null)[]): Record<string, number> | null {
  if (runs.some((cpu) => cpu === null)) return null;
  const total: Record<string, number> = {};
  for (const cpu of runs) {
    for (const [command, ms] of Object.entries(cpu ?? {}))
      total[command] = (total[command] ?? 0) + ms;
  }
  return total;
}

export function measure(target: Target, options: LoadOptions): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const cpuBefore = options.cpu?.() ?? null;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        body: target.body,
        connections: options.connections,
        duration: options.durationMs / 1000,
        timeout: (options.timeoutMs ?? 10_000) / 1000,
        // Clients keep sending until the next sample after `duration`: sample often so a run
        // overruns its duration by at most this much (the rate uses the measured time).
        sampleInt: 100,
      },
      (error) => {
        if (error) return reject(error);
        const durationS = (performance.now() - start) / 1000;
        const result = {
          name: target.name,
          url: target.url,
          connections: options.connections,
          durationS,
          ok: latencies.length,
          errors,
          requestsPerSecond: latencies.length / durationS,
          latencyMs: summariseLatencies(latencies),
          cpuMs: cpuSpent(cpuBefore, options.cpu?.() ?? null),
        };
        resolve({ result, latencies });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      else errors++;
    });
    instance.on("reqError", () => {
      errors++;
    });
  });
}
