/**
 * The targets for `cost`, measured and printed (never asserted: they are for the policy
 * to reach, and the simulator must not be tuned towards them). Each target is evaluated only on
 * the runs it names (its loads, fleet sizes, and sharing or not), since a figure read at another
 * load says nothing about it; each line says what was compared, the figures and whether it is
 * met. A target whose policies were not run is skipped. At a load no target names, one line
 * says which loads they name.
 */
import type { BenchResult, PolicyResult } from "../../../sim/fleet/result-types.ts";

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

interface Target {
  /** The runs it is stated for; absent means any. */
  loads?: readonly number[];
  origins?: readonly number[];
  sharing: boolean;
  line: (r: BenchResult, cost: PolicyResult) => string | undefined;
}

const TARGETS: readonly Target[] = [
  {
    loads: [0.8],
    origins: [8, 16],
    sharing: true,
    line: (r, cost) => {
      const need = 0.9 * r.fleetOracleHitRate;
      return (
        `hit rate >= 0.9 x fleet oracle (conversation/synthetic, 8 and 16 origins, load 0.8): ` +
        `${cost.hitRate} vs ${need.toFixed(4)} -> ${verdict(cost.hitRate >= need)} ` +
        `(${(cost.hitRate / r.fleetOracleHitRate).toFixed(2)} x fleet oracle)`
      );
    },
  },
  {
    loads: [0.8, 1.0],
    sharing: true,
    line: (r, cost) => {
      const baseline = best(r, CACHE_BASELINES);
      if (!baseline) return undefined;
      const need99 = 0.8 * baseline.ttftMs.p99;
      return (
        `p99 TTFT >= 20% below best of cache-aware/llm-d/llm-d-precise/dynamo (load 0.8 and 1.0): ` +
        `${ms(cost.ttftMs.p99)} vs 0.8 x ${baseline.policy} ${ms(baseline.ttftMs.p99)} = ` +
        `${ms(need99)} -> ${verdict(cost.ttftMs.p99 <= need99)}`
      );
    },
  },
  {
    loads: [1.0],
    sharing: true,
    line: (r, cost) => {
      const rr = r.results.find((p) => p.policy === "round-robin");
      if (!rr) return undefined;
      return (
        `mean TTFT >= 10x below round-robin (load 1.0): ${ms(cost.ttftMs.mean)} vs ` +
        `${ms(rr.ttftMs.mean)} / 10 -> ${verdict(cost.ttftMs.mean * 10 <= rr.ttftMs.mean)} ` +
        `(${(rr.ttftMs.mean / cost.ttftMs.mean).toFixed(1)}x)`
      );
    },
  },
  {
    sharing: false,
    line: (r, cost) => {
      const balancer = best(r, LOAD_BALANCERS);
      if (!balancer) return undefined;
      return (
        `no sharing: p99 TTFT within 5% of the best load balancer: ${ms(cost.ttftMs.p99)} vs ` +
        `${balancer.policy} ${ms(balancer.ttftMs.p99)} -> ` +
        `${verdict(cost.ttftMs.p99 <= 1.05 * balancer.ttftMs.p99)}`
      );
    },
  },
];

export function targetLines(r: BenchResult): string[] {
  const cost = r.results.find((p) => p.policy === "cost");
  if (!cost) return [];
  const sharing = r.oracleHitRate > 0;
  const stated = TARGETS.filter((t) => t.sharing === sharing);
  const applies = stated.filter(
    (t) => (t.loads?.includes(r.load) ?? true) && (t.origins?.includes(r.origins) ?? true),
  );
  const lines = applies.flatMap((t) => t.line(r, cost) ?? []);
  if (applies.length === 0 && stated.length > 0) {
    const loads = [...new Set(stated.flatMap((t) => t.loads ?? []))].sort();
    return [`none at load ${r.load}: the targets name load ${loads.join(" and ")}`];
  }
  return lines;
}
