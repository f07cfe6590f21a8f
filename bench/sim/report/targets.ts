/**
 * The targets for `cost`, measured and printed (never asserted: they are for the policy
 * to reach, and the simulator must not be tuned towards them). Each line says what was compared,
 * the figures and whether it is met; a target whose policies were not run is skipped.
 */
import type { BenchResult, PolicyResult } from "../run/result-types.ts";

const CACHE_BASELINES = ["cache-aware", "llm-d", "llm-d-precise", "dynamo"];
const LOAD_BALANCERS = ["round-robin", "random", "least-outstanding", "power-of-two"];

const ms = (v: number) => `${Math.round(v).toLocaleString("en-US")} ms`;
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

function best(r: BenchResult, names: readonly string[]): PolicyResult | undefined {
  return r.results
    .filter((p) => names.includes(p.policy))
    .reduce<PolicyResult | undefined>(
      (a, p) => (!a || p.ttftMs.p99 < a.ttftMs.p99 ? p : a),
      undefined,
    );
}

export function targetLines(r: BenchResult): string[] {
  const cost = r.results.find((p) => p.policy === "cost");
  if (!cost) return [];
  const out: string[] = [];
  if (r.oracleHitRate > 0) {
    const need = 0.9 * r.fleetOracleHitRate;
    out.push(
      `hit rate >= 0.9 x fleet oracle (conversation/synthetic, 8 and 16 origins, load 0.8): ` +
        `${cost.hitRate} vs ${need.toFixed(4)} -> ${verdict(cost.hitRate >= need)} ` +
        `(${(cost.hitRate / r.fleetOracleHitRate).toFixed(2)} x fleet oracle)`,
    );
    const baseline = best(r, CACHE_BASELINES);
    if (baseline) {
      const need99 = 0.8 * baseline.ttftMs.p99;
      out.push(
        `p99 TTFT >= 20% below best of cache-aware/llm-d/llm-d-precise/dynamo (load 0.8 and 1.0): ` +
          `${ms(cost.ttftMs.p99)} vs 0.8 x ${baseline.policy} ${ms(baseline.ttftMs.p99)} = ` +
          `${ms(need99)} -> ${verdict(cost.ttftMs.p99 <= need99)}`,
      );
    }
  }
  const rr = r.results.find((p) => p.policy === "round-robin");
  if (rr) {
    out.push(
      `mean TTFT >= 10x below round-robin (load 1.0): ${ms(cost.ttftMs.mean)} vs ` +
        `${ms(rr.ttftMs.mean)} / 10 -> ${verdict(cost.ttftMs.mean * 10 <= rr.ttftMs.mean)} ` +
        `(${(rr.ttftMs.mean / cost.ttftMs.mean).toFixed(1)}x)`,
    );
  }
  const balancer = best(r, LOAD_BALANCERS);
  if (r.oracleHitRate === 0 && balancer) {
    out.push(
      `no sharing: p99 TTFT within 5% of the best load balancer: ${ms(cost.ttftMs.p99)} vs ` +
        `${balancer.policy} ${ms(balancer.ttftMs.p99)} -> ` +
        `${verdict(cost.ttftMs.p99 <= 1.05 * balancer.ttftMs.p99)}`,
    );
  }
  return out;
}
