/**
 * The load test's figures: latency summaries, the router's overhead against the direct origin
 * and the platform's floor, and the printed table. Pure, so the arithmetic is tested alone.
 */
import { quantile } from "../../sim/report/stats.ts";
import { formatTable } from "../../sim/report/table.ts";

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export function summariseLatencies(values: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  // The shared quantile answers 0 for no samples; no answers is not a zero latency here.
  const at = (q: number) => (sorted.length > 0 ? quantile(sorted, q) : Number.NaN);
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

/** The figures compared: a target's name, throughput and latency. */
export interface Measured {
  name: string;
  ok: number;
  errors: number;
  requestsPerSecond: number;
  latencyMs: LatencySummary;
  /** CPU ms wrangler dev's processes spent on the target, by command; absent if unknown. */
  cpuMs?: Record<string, number> | null;
}

/** CPU ms per answered request: `workerd` (the Worker, its objects) and wrangler's own rest. */
export function cpuPerRequest(t: Measured): { workerd: number; wrangler: number } | null {
  if (!t.cpuMs || t.ok === 0) return null;
  let wrangler = 0;
  for (const [command, ms] of Object.entries(t.cpuMs)) if (command !== "workerd") wrangler += ms;
  return { workerd: (t.cpuMs.workerd ?? 0) / t.ok, wrangler: wrangler / t.ok };
}

export interface Overhead {
  /** Routed minus direct latency: what a client pays for going through the router. */
  addedMs: { p50: number; p99: number };
  /** Routed over direct latency. */
  latencyRatio: { p50: number; p99: number };
  /** Routed minus direct minus healthz: the router's own cost above the platform's floor. */
  ownMs: { p50: number; p99: number };
  /** Routed over direct requests per second. */
  throughputRatio: number;
}

export function overhead(direct: Measured, routed: Measured, healthz: Measured): Overhead {
  const at = (q: "p50" | "p99") => {
    const added = routed.latencyMs[q] - direct.latencyMs[q];
    return {
      added,
      ratio: routed.latencyMs[q] / direct.latencyMs[q],
      own: added - healthz.latencyMs[q],
    };
  };
  const p50 = at("p50");
  const p99 = at("p99");
  return {
    addedMs: { p50: p50.added, p99: p99.added },
    latencyRatio: { p50: p50.ratio, p99: p99.ratio },
    ownMs: { p50: p50.own, p99: p99.own },
    throughputRatio: routed.requestsPerSecond / direct.requestsPerSecond,
  };
}

const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  formatTable(rows, { header });

const ms = (v: number) => v.toFixed(2);

/** One routed target's overhead, by its name. */
export interface NamedOverhead {
  readonly name: string;
  readonly overhead: Overhead;
}

export function formatReport(
  targets: readonly Measured[],
  costs: readonly NamedOverhead[],
): string {
  const perTarget = table(
    [
      "target",
      "requests",
      "req/s",
      "p50 ms",
      "p99 ms",
      "errors",
      "workerd ms/req",
      "wrangler ms/req",
    ],
    targets.map((t) => {
      const cpu = cpuPerRequest(t);
      return [
        t.name,
        String(t.ok),
        t.requestsPerSecond.toFixed(0),
        ms(t.latencyMs.p50),
        ms(t.latencyMs.p99),
        String(t.errors),
        cpu ? ms(cpu.workerd) : "",
        cpu ? ms(cpu.wrangler) : "",
      ];
    }),
  );
  const rows = costs.flatMap(({ name, overhead: cost }) => [
    [`${name} - direct`, ms(cost.addedMs.p50), ms(cost.addedMs.p99), ""],
    [
      `${name} / direct`,
      `${cost.latencyRatio.p50.toFixed(1)}x`,
      `${cost.latencyRatio.p99.toFixed(1)}x`,
      "",
    ],
    [
      `${name} - direct - healthz`,
      ms(cost.ownMs.p50),
      ms(cost.ownMs.p99),
      `${(100 * cost.throughputRatio).toFixed(1)}%`,
    ],
  ]);
  const overheadTable = table(["router overhead", "p50 ms", "p99 ms", "req/s of direct"], rows);
  const modes = modeRatios(targets.filter((t) => costs.some((c) => c.name === t.name)));
  return `${perTarget}\n\n${overheadTable}${modes ? `\n\n${modes}` : ""}`;
}

/**
 * Each routed mode against the first (issue 12's target: edge's requests/s at least twice
 * object's): the requests/s ratio, and the ratio of workerd CPU per request the other way round
 * (first / mode, which a shared machine's load moves less), so that in both columns more than 1x
 * favours the mode. The headers say which way each runs: unlabelled, a CPU ratio of 2x read as
 * "twice the CPU" (issue 24).
 */
function modeRatios(routed: readonly Measured[]): string | null {
  const [base, ...others] = routed;
  if (!base || others.length === 0) return null;
  const baseCpu = cpuPerRequest(base);
  return table(
    [
      `against ${base.name}`,
      `req/s: mode / ${base.name}`,
      `workerd CPU/req: ${base.name} / mode (>1x: mode cheaper)`,
    ],
    others.map((t) => {
      const cpu = cpuPerRequest(t);
      return [
        t.name,
        `${(t.requestsPerSecond / base.requestsPerSecond).toFixed(2)}x`,
        baseCpu && cpu ? `${(baseCpu.workerd / cpu.workerd).toFixed(2)}x` : "",
      ];
    }),
  );
}
