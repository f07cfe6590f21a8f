/**
 * bench:real's figures and tables: per policy what the client saw on the real engines (TTFT
 * p50/p90, engine-reported cached fraction, requests per origin, wall time), the same figures
 * from the fitted simulator and the gap between them, and the targets checked.
 */

import type { PolicyResult } from "../../sim/fleet/result-types.ts";
import { formatTable } from "../../sim/report/table.ts";
import type { EngineCounters } from "../../tools/llama/engine-counters.ts";
import type { ReplayResult } from "../../tools/replay/replay.ts";
import { summarise } from "../../tools/replay/summary.ts";

export interface Figures {
  policy: string;
  requests: number;
  failed: number;
  /** Engine-reported cached prompt tokens over prompt tokens. */
  cachedFraction: number;
  ttftP50Ms: number | null;
  ttftP90Ms: number | null;
  /** Requests each origin served, in origin order. */
  perOrigin: number[];
  /** First send to last answer. */
  wallMs: number;
}

export interface RealFigures extends Figures {
  origins: string[];
  counters: EngineCounters;
}

export function realFigures(
  policy: string,
  results: readonly ReplayResult[],
  origins: readonly string[],
  wallMs: number,
  counters: EngineCounters,
): RealFigures {
  const s = summarise(policy, results, origins);
  return {
    policy,
    requests: s.requests,
    failed: s.failed,
    cachedFraction: s.cachedRatio,
    ttftP50Ms: s.ttftP50Ms,
    ttftP90Ms: s.ttftP90Ms,
    perOrigin: origins.map((o) => s.perOrigin[o] ?? 0),
    origins: [...origins],
    wallMs,
    counters,
  };
}

export function simFigures(r: PolicyResult, requests: number): Figures {
  return {
    policy: r.policy,
    requests,
    failed: requests - r.perOrigin.reduce((n, o) => n + o.requests, 0),
    cachedFraction: r.hitRate,
    ttftP50Ms: r.ttftMs.p50,
    ttftP90Ms: r.ttftMs.p90,
    perOrigin: r.perOrigin.map((o) => o.requests),
    wallMs: r.throughputRps > 0 ? (1000 * requests) / r.throughputRps : 0,
  };
}

const ms = (v: number | null) => (v === null ? "-" : v.toFixed(0));
const pct = (v: number) => `${(100 * v).toFixed(1)}%`;

function row(source: string, f: Figures): string[] {
  return [
    f.policy,
    source,
    String(f.requests),
    String(f.failed),
    pct(f.cachedFraction),
    ms(f.ttftP50Ms),
    ms(f.ttftP90Ms),
    f.perOrigin.join("/"),
    (f.wallMs / 1000).toFixed(1),
  ];
}

const ratio = (sim: number | null, real: number | null) =>
  sim === null || real === null || real === 0 ? "-" : `x${(sim / real).toFixed(2)}`;

/** Real and simulated rows per policy, then the gap (simulated minus or over real). */
export function formatComparison(real: readonly Figures[], sim: readonly Figures[]): string {
  const cells: string[][] = [];
  for (const [i, r] of real.entries()) {
    const s = sim[i] as Figures;
    cells.push(row("real", r), row("simulated", s));
    cells.push([
      r.policy,
      "gap",
      "",
      "",
      `${((s.cachedFraction - r.cachedFraction) * 100).toFixed(1)} pt`,
      ratio(s.ttftP50Ms, r.ttftP50Ms),
      ratio(s.ttftP90Ms, r.ttftP90Ms),
      "",
      ratio(s.wallMs, r.wallMs),
    ]);
  }
  const header = [
    "policy",
    "run",
    "requests",
    "failed",
    "cached",
    "TTFT p50 ms",
    "TTFT p90 ms",
    "per origin",
    "wall s",
  ];
  return formatTable(cells, { header });
}

export interface Target {
  name: string;
  met: boolean;
  detail: string;
}

const order = (rows: readonly Figures[], key: (f: Figures) => number) =>
  [...rows].sort((a, b) => key(a) - key(b)).map((f) => f.policy);

/** The targets: cost against round-robin on the real engines, and the simulator's fit. */
export function targets(real: readonly Figures[], sim: readonly Figures[]): Target[] {
  const out: Target[] = [];
  const cost = real.find((f) => f.policy === "cost");
  const rr = real.find((f) => f.policy === "round-robin");
  if (cost && rr) {
    const cached = cost.cachedFraction / Math.max(1e-9, rr.cachedFraction);
    out.push({
      name: "cost's cached fraction >= 2x round-robin's",
      met: cached >= 2,
      detail: `x${cached.toFixed(2)}`,
    });
    const ttft = (cost.ttftP50Ms ?? Number.POSITIVE_INFINITY) / (rr.ttftP50Ms ?? 0);
    out.push({
      name: "cost's TTFT p50 <= 0.5x round-robin's",
      met: ttft <= 0.5,
      detail: `x${ttft.toFixed(2)}`,
    });
  }
  const failed = real.reduce((n, f) => n + f.failed, 0);
  out.push({ name: "zero failed requests", met: failed === 0, detail: String(failed) });
  const p50 = (f: Figures) => f.ttftP50Ms ?? Number.POSITIVE_INFINITY;
  const realOrder = order(real, p50).join(" < ");
  const simOrder = order(sim, p50).join(" < ");
  out.push({
    name: "simulator ranks the policies as the real run (TTFT p50)",
    met: realOrder === simOrder,
    detail: `real ${realOrder}; simulated ${simOrder}`,
  });
  for (const [i, r] of real.entries()) {
    const gap = Math.abs((sim[i] as Figures).cachedFraction - r.cachedFraction);
    out.push({
      name: `simulator's cached fraction within 0.1 (${r.policy})`,
      met: gap <= 0.1,
      detail: gap.toFixed(3),
    });
  }
  return out;
}

export function formatTargets(list: readonly Target[]): string {
  return list.map((t) => `${t.met ? "met    " : "NOT MET"}  ${t.name}: ${t.detail}`).join("\n");
}
