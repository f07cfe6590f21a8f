/**
 * The P/D comparison as printed tables and target lines: per policy and fleet, the mean over
 * seeds of TTFT, ITL (every inter-token gap, pooled), TPOT (each request's mean gap), the
 * longest gap, the share prefilled remotely and the share a prefill origin served whole; then the targets, measured and printed
 * (never asserted), each a ratio per seed, shown as the mean and the range over seeds.
 */

import type { PolicyResult } from "../../../sim/fleet/result-types.ts";
import { round } from "../../../sim/report/stats.ts";
import { formatTable } from "../../../sim/report/table.ts";
import type { FleetName, PdComparison } from "../pd/pd-comparison.ts";

type Figure = (p: PolicyResult) => number;

const FIGURES: [string, Figure][] = [
  ["TTFT p50", (p) => p.ttftMs.p50],
  ["p90", (p) => p.ttftMs.p90],
  ["p99 ms", (p) => p.ttftMs.p99],
  ["ITL p50", (p) => p.itlMs.p50],
  ["p99", (p) => p.itlMs.p99],
  ["TPOT p50", (p) => p.tpotMs.p50],
  ["p99", (p) => p.tpotMs.p99],
  ["gap p99 ms", (p) => p.itlMaxGapMs.p99],
  ["remote", (p) => p.pd?.remoteRate ?? 0],
  ["whole on P", (p) => p.pd?.wholeOnPrefillRate ?? 0],
];

function results(c: PdComparison, fleet: FleetName, policy: string): PolicyResult[] {
  return c.runs
    .filter((r) => r.fleet === fleet)
    .map((r) => r.result.results.find((p) => p.policy === policy))
    .filter((p): p is PolicyResult => p !== undefined);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function fleetLabel(c: PdComparison, fleet: FleetName): string {
  const n = c.prefill + c.decode;
  return fleet === "aggregated" ? `aggregated ${n}` : `P/D ${c.prefill}:${c.decode} ${fleet}`;
}

export function policiesOf(c: PdComparison): string[] {
  return c.runs[0]?.result.results.map((p) => p.policy) ?? [];
}

/** One table per policy: a row per fleet, each figure the mean over seeds. */
export function pdTable(c: PdComparison, policy: string): string {
  const header = ["fleet", ...FIGURES.map(([name]) => name)];
  const rows = c.fleets.map((fleet) => {
    const rs = results(c, fleet, policy);
    return [
      fleetLabel(c, fleet),
      ...FIGURES.map(([name, f]) => {
        const v = mean(rs.map(f));
        if (name === "remote" || name === "whole on P")
          return fleet === "aggregated" ? "-" : v.toFixed(3);
        return v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US");
      }),
    ];
  });
  return formatTable(rows, { header });
}

export interface Ratio {
  mean: number;
  min: number;
  max: number;
}

/** `a`'s figure over `b`'s, per seed, as the mean and range over seeds. */
export function ratio(
  c: PdComparison,
  policy: string,
  a: FleetName,
  b: FleetName,
  f: Figure,
): Ratio | null {
  const ra = results(c, a, policy);
  const rb = results(c, b, policy);
  if (ra.length === 0 || ra.length !== rb.length) return null;
  const xs = ra.map((p, i) => f(p) / Math.max(1e-9, f(rb[i] as PolicyResult)));
  return {
    mean: round(mean(xs), 3),
    min: round(Math.min(...xs), 3),
    max: round(Math.max(...xs), 3),
  };
}

const show = (r: Ratio) => `${r.mean.toFixed(2)}x (${r.min.toFixed(2)}-${r.max.toFixed(2)})`;
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

/**
 * The workloads the targets are stated for (README's "Disaggregated prefill/decode"): long
 * prompts, the conversation trace with outputs x4 at load 0.3; short prompts, Azure's
 * conversation trace at load 0.5 or 0.35. A figure read on another workload says nothing about
 * them.
 */
type PdWorkload = "long prompts" | "short prompts";
const WORKLOADS_NAMED =
  "targets are for long prompts (conversation_trace.jsonl --output-scale 4 --load 0.3) and " +
  "short prompts (AzureLLMInferenceTrace_conv.csv --load 0.5 or 0.35)";

function workloadOf(c: PdComparison): PdWorkload | null {
  const r = c.runs[0]?.result;
  if (r?.trace === "conversation_trace.jsonl" && r.outputScale === 4 && r.load === 0.3) {
    return "long prompts";
  }
  if (r?.trace === "AzureLLMInferenceTrace_conv.csv" && (r.load === 0.5 || r.load === 0.35)) {
    return "short prompts";
  }
  return null;
}

/**
 * The targets for one policy on the workload it ran: conditional P/D against the aggregated
 * fleet and against always. On a workload no target names, one line saying which they name.
 */
export function pdTargetLines(c: PdComparison, policy: string): string[] {
  const workload = workloadOf(c);
  if (workload === null) return [`none for this workload: ${WORKLOADS_NAMED}`];
  const out: string[] = [];
  const itl = ratio(c, policy, "conditional", "aggregated", (p) => p.itlMs.p99);
  const tpot = ratio(c, policy, "conditional", "aggregated", (p) => p.tpotMs.p99);
  const ttft = ratio(c, policy, "conditional", "aggregated", (p) => p.ttftMs.p90);
  if (itl && tpot && ttft && workload === "long prompts") {
    out.push(
      `long prompts: conditional p99 ITL <= 0.5x aggregated: ${show(itl)} -> ` +
        `${verdict(itl.mean <= 0.5)} (p99 TPOT ${show(tpot)})`,
      `long prompts: conditional p90 TTFT <= 1.2x aggregated: ${show(ttft)} -> ${verdict(ttft.mean <= 1.2)}`,
    );
  }
  if (itl && ttft && workload === "short prompts") {
    out.push(
      `short prompts: conditional no worse than aggregated (p90 TTFT and p99 ITL <= 1x): ` +
        `${show(ttft)}, ${show(itl)} -> ${verdict(ttft.mean <= 1 && itl.mean <= 1)}`,
    );
  }
  const always = ratio(c, policy, "conditional", "always", (p) => p.ttftMs.p90);
  const alwaysItl = ratio(c, policy, "conditional", "always", (p) => p.itlMs.p99);
  if (always && alwaysItl && workload === "short prompts") {
    out.push(
      `short prompts: conditional better than always (p90 TTFT < 1x always): ${show(always)} -> ` +
        `${verdict(always.mean < 1)} (p99 ITL ${show(alwaysItl)})`,
    );
  }
  return out;
}
