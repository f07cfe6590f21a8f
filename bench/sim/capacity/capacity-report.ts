/**
 * A capacity run for people: the table (capacity per policy with its spread over seeds, the
 * multiple of round-robin's, and the figures at each policy's capacity point), the issue's
 * targets for `cost` (measured, never asserted), and the HTML page with the objective's TTFT
 * quantile against offered rate per policy, the objective's line and each seed's capacity.
 * Under coordination modes, rows are `policy [mode]`, and with both modes the paired ratio
 * edge / object per seed and its mean with a 95% CI (`edgeRatioTable`). Each row's paired
 * ratio `cost` / it has its 95% interval; one within 5% of 1 reads "within noise". The two
 * ceilings follow the table, with each policy's capacity as a share of the oracle's.
 */
import { round } from "../../../sim/report/stats.ts";
import { formatTable } from "../../../sim/report/table.ts";
import { formatRatio } from "../edge/paired-stats.ts";
import { page, pre } from "../report/html.ts";
import { colorOf } from "../report/palette.ts";
import { formatSpread } from "../report/spread.ts";
import { barChart, lineChart } from "../report/svg.ts";
import { type CapacityPolicyResult, type CapacityResult, labelOf } from "./capacity-run.ts";
import { parseObjective } from "./verdict.ts";

const LOAD_BALANCERS = ["round-robin", "random", "least-outstanding", "power-of-two"];

const int = (v: number) => Math.round(v).toLocaleString("en-US");

/** Margins closer to 1 than this are printed as noise. */
export const NOISE = 0.05;

export function capacityHeader(r: CapacityResult): string[] {
  const seeds = r.seeds.map((s) => s.seed);
  const first = r.seeds[0];
  const o = parseObjective(r.objective);
  const fleet = r.fleet ? `fleet ${r.fleet} (${r.fleetPrior} prior)` : r.profile;
  const split = r.split ? ` | split ${r.split}` : "";
  const windows = r.seeds.some((s) => s.window)
    ? ` | one disjoint window per seed (${r.seeds.map((s) => s.requests).join(", ")} requests)`
    : "";
  return [
    `${r.trace} | ${r.origins} origins | ${fleet} | ${r.requests.toLocaleString("en-US")} ` +
      `requests | arrivals ${r.arrivals} | seeds ${seeds.join(", ")}${split}${windows}`,
    `objective ${o.quantile} TTFT <= ${int(o.ms)} ms | keeps up: TTFT by arrival time rises by ` +
      `<= ${round(((1 - r.keepUpRatio) / r.keepUpRatio) * 100, 1)}% of the second half's ` +
      `duration (beyond 2 standard errors; a rise in requests in system that follows the ` +
      `arrival rate is no backlog), backlog not growing | ` +
      `resolution ${r.resolution * 100}%`,
    `load 1 = ${first?.loadOneRps ?? 0} req/s | oracle hit rate ${first?.oracleHitRate ?? 0} | ` +
      `fleet oracle ${first?.fleetOracleHitRate ?? 0}${seeds.length > 1 ? " (first seed)" : ""}`,
  ];
}

export function capacityTable(r: CapacityResult): string {
  const header = [
    "policy",
    "capacity req/s",
    "95% CI",
    "cost / it [95% CI]",
    "/oracle",
    "x RR",
    "hit",
    "/fleet",
    "TTFT p50",
    "p90",
    "p99 ms",
    "probes",
  ];
  const sharing = (r.seeds[0]?.fleetOracleHitRate ?? 0) > 0;
  const oracle = r.ceilings.oracle.capacityRps.mean;
  const rows = r.results.map((p) => {
    const a = p.atCapacity;
    const probes = p.seeds.reduce((n, s) => n + s.probes.length, 0);
    return [
      labelOf(p),
      formatSpread(p.capacityRps, 2),
      p.capacityRps.lo === p.capacityRps.hi
        ? "-"
        : `${p.capacityRps.lo.toFixed(2)}-${p.capacityRps.hi.toFixed(2)}`,
      ratioText(p),
      oracle > 0 ? (p.capacityRps.mean / oracle).toFixed(2) : "-",
      p.vsRoundRobin === null ? "-" : p.vsRoundRobin.toFixed(2),
      a ? a.hitRate.mean.toFixed(4) : "-",
      a && sharing ? a.hitRateVsFleetOracle.mean.toFixed(2) : "-",
      a ? int(a.ttftMs.p50.mean) : "-",
      a ? int(a.ttftMs.p90.mean) : "-",
      a ? int(a.ttftMs.p99.mean) : "-",
      String(probes),
    ];
  });
  const notes = r.results.flatMap((p) =>
    p.seeds
      .filter((s) => s.status !== "bracketed")
      .map((s) => `${labelOf(p)} seed ${s.seed}: ${s.status}`),
  );
  return (
    formatTable(rows, { header }) +
    `\n\n${ceilingLines(r).join("\n")}` +
    (notes.length > 0 ? `\n\n${notes.join("\n")}` : "")
  );
}

/** `1.12 [1.05, 1.19]`, or with "within noise" when the mean is within 5% of 1. */
export function ratioText(p: CapacityPolicyResult): string {
  const q = p.pairedRatio;
  if (!q) return "-";
  if (p.policy === "cost") return "1";
  const noise = Math.abs(q.mean - 1) < NOISE ? " within noise" : "";
  return `${q.mean.toFixed(2)} [${q.lo.toFixed(2)}, ${q.hi.toFixed(2)}]${noise}`;
}

/** The two ceilings and what they mean. */
export function ceilingLines(r: CapacityResult): string[] {
  const k = r.ceilings.keepUp;
  const o = r.ceilings.oracle.capacityRps;
  return [
    k
      ? `keep-up ceiling (${k.policy}, no latency objective): ${formatSpread(k.capacityRps, 2)} req/s`
      : "keep-up ceiling: not searched",
    `oracle ceiling (prefill GPU time of the infinite-cache oracle's misses, no decode): ` +
      `${formatSpread(o, 2)} req/s`,
  ];
}

function best(
  r: CapacityResult,
  keep: (p: CapacityPolicyResult) => boolean,
): CapacityPolicyResult | undefined {
  return r.results
    .filter(keep)
    .reduce<CapacityPolicyResult | undefined>(
      (a, p) => (!a || p.capacityRps.mean > a.capacityRps.mean ? p : a),
      undefined,
    );
}

/**
 * Capacity at the objective under edge coordination over object mode, paired by seed: each
 * seed's ratio, then their mean and 95% CI (Student's t, ../edge/paired-stats.ts).
 */
export function edgeRatioTable(r: CapacityResult): string {
  const rows = r.edgeRatio.flatMap((e) => [
    ...e.seeds.map((s) => [
      e.policy,
      String(s.seed),
      s.objectRps.toFixed(2),
      s.edgeRps.toFixed(2),
      s.ratio === null ? "-" : s.ratio.toFixed(3),
    ]),
    [e.policy, "mean", "", "", formatRatio(e.ratio)],
  ]);
  const t = r.edgeRatio[0]?.edge.topology;
  const title = t
    ? `capacity at the objective, edge (I=${t.isolates} C=${t.colos} S=${t.coordinators}) / ` +
      `object, paired by seed (mean [95% CI]):`
    : "";
  return `${title}
${formatTable(rows, {
  header: ["policy", "seed", "object req/s", "edge req/s", "edge / object"],
})}`;
}

/** The capacity targets for `cost`, with figures and verdicts (policies in one mode). */
export function capacityTargets(r: CapacityResult): string[] {
  const cost = r.results.find((p) => p.policy === "cost");
  if (!cost || r.results.some((p) => p.coordination !== null)) return [];
  const c = cost.capacityRps.mean;
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const out: string[] = [];
  const sharing = (r.seeds[0]?.oracleHitRate ?? 0) > 0;
  const other = best(r, (p) => p.policy !== "cost");
  if (sharing && other) {
    out.push(
      `capacity >= 1.25 x best other policy (conversation 8 and 16, synthetic 8): ` +
        `${c.toFixed(2)} vs 1.25 x ${other.policy} ${other.capacityRps.mean.toFixed(2)} -> ` +
        `${verdict(c >= 1.25 * other.capacityRps.mean)} (${(c / other.capacityRps.mean || 0).toFixed(2)}x)`,
    );
  }
  const rr = r.results.find((p) => p.policy === "round-robin");
  if (sharing && rr) {
    out.push(
      `capacity >= 3 x round-robin: ${c.toFixed(2)} vs 3 x ${rr.capacityRps.mean.toFixed(2)} -> ` +
        `${verdict(c >= 3 * rr.capacityRps.mean)} (${(c / rr.capacityRps.mean || 0).toFixed(2)}x)`,
    );
  }
  const balancer = best(r, (p) => LOAD_BALANCERS.includes(p.policy));
  if (!sharing && balancer) {
    out.push(
      `no sharing: capacity within 3% of the best load balancer: ${c.toFixed(2)} vs ` +
        `${balancer.policy} ${balancer.capacityRps.mean.toFixed(2)} -> ` +
        `${verdict(c >= 0.97 * balancer.capacityRps.mean)}`,
    );
  }
  if (sharing && cost.atCapacity) {
    const ratio = cost.atCapacity.hitRateVsFleetOracle.mean;
    out.push(
      `hit rate at capacity >= 0.95 x fleet oracle: ${ratio.toFixed(3)} x -> ${verdict(ratio >= 0.95)}`,
    );
  }
  return out;
}

function ttftChart(r: CapacityResult): string {
  const o = parseObjective(r.objective);
  const first = r.seeds[0]?.seed;
  const series = r.results.map((p) => ({
    label: labelOf(p),
    color: colorOf(p.policy),
    points: (p.seeds.find((s) => s.seed === first)?.probes ?? [])
      .map((x) => [x.offeredRps, Math.max(1, x.ttftMs[o.quantile])] as const)
      .sort((a, b) => a[0] - b[0]),
  }));
  const marks = r.results.flatMap((p) =>
    p.seeds.flatMap((s) => {
      const at = s.probes.find((x) => x.offeredRps === s.capacityRps && x.verdict.pass);
      return at
        ? [{ x: at.offeredRps, y: Math.max(1, at.ttftMs[o.quantile]), color: colorOf(p.policy) }]
        : [];
    }),
  );
  return lineChart(series, {
    title: `${o.quantile} TTFT against offered rate (probes of seed ${first}; rings: each seed's capacity)`,
    xLabel: "offered requests/s",
    yLabel: `${o.quantile} TTFT (ms, log scale)`,
    yLog: true,
    refLines: [{ y: o.ms, label: `objective ${o.quantile} <= ${int(o.ms)} ms`, color: "#c00" }],
    marks,
  });
}

function capacityBars(r: CapacityResult): string {
  return barChart(
    r.results.map((p) => ({
      label: labelOf(p),
      value: p.capacityRps.mean,
      color: colorOf(p.policy),
    })),
    { title: "Capacity per policy (mean over seeds)", xLabel: "policy", yLabel: "requests/s" },
  );
}

export function capacityPage(r: CapacityResult): string {
  const targets = capacityTargets(r);
  const body = [
    pre([...capacityHeader(r), "", capacityTable(r)]),
    targets.length > 0 ? `<h2>Targets for cost</h2>${pre(targets)}` : "",
    r.edgeRatio.length > 0 ? `<h2>Edge / object</h2>${pre([edgeRatioTable(r)])}` : "",
    `<h2>Latency against offered rate</h2>${ttftChart(r)}`,
    `<h2>Capacity</h2>${capacityBars(r)}`,
    `<p class="note">Each point is one probe: the whole workload replayed at that offered rate. ` +
      `A probe passes when the objective holds and the fleet keeps up; capacity is the highest ` +
      `rate that passed. Every probe, with its verdict, is in the JSON. See bench/sim/README.md.</p>`,
  ].join("\n");
  return page(`llm-edge-router capacity: ${r.trace}`, body);
}
