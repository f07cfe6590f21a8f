/**
 * The self-contained HTML reports (inline CSS and SVG; no scripts, no external resources):
 * - one run: results table, TTFT CDF per policy, hit rate per policy against both oracles, and
 *   per-origin load over time for `prefix-hash` and `cost`, those of them that ran (the
 *   hot-prefix picture);
 * - a fleet sweep: hit rate and p99 TTFT per policy against the number of origins (means over
 *   seeds with `--seeds K`).
 */
import type { BenchResult } from "../../../sim/fleet/result-types.ts";
import { colorAt, colorOf } from "./palette.ts";
import { barChart, escapeXml, lineChart } from "./svg.ts";
import { headerLines, resultsTable } from "./table.ts";
import { targetLines } from "./targets.ts";

export interface FleetSweep {
  sizes: number[];
  seeds: number[];
  /** One run per size and seed, size-major. */
  runs: BenchResult[];
}

export function runsOfSize(s: FleetSweep, origins: number): BenchResult[] {
  return s.runs.filter((run) => run.origins === origins);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1100px; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 12px; }
svg { display: block; margin: 12px 0 24px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
p.note { color: #555; font-size: 13px; }
</style></head><body>
<h1>${escapeXml(title)}</h1>
${body}
</body></html>
`;
}

export function pre(lines: readonly string[]): string {
  return `<pre>${escapeXml(lines.join("\n"))}</pre>`;
}

function ttftCdf(r: BenchResult): string {
  const series = r.results.map((p) => ({
    label: p.policy,
    color: colorOf(p.policy),
    points: p.ttftCdfMs.map((v, k) => [Math.max(v, 1), k / 100] as const),
  }));
  return lineChart(series, {
    title: "TTFT CDF per policy",
    xLabel: "time to first token (ms, log scale)",
    yLabel: "share of requests",
    xLog: true,
    yMin: 0,
    yMax: 1,
  });
}

function hitRates(r: BenchResult): string {
  return barChart(
    r.results.map((p) => ({ label: p.policy, value: p.hitRate, color: colorOf(p.policy) })),
    {
      title: "Hit rate per policy (engine-reported cached tokens / prompt tokens)",
      xLabel: "policy",
      yLabel: "hit rate",
      refLines: [
        { y: r.oracleHitRate, label: `infinite-cache oracle ${r.oracleHitRate}`, color: "#333" },
        {
          y: r.fleetOracleHitRate,
          label: `fleet LRU oracle ${r.fleetOracleHitRate}`,
          color: "#c00",
        },
      ],
    },
  );
}

function originLoad(r: BenchResult, policy: string): string {
  const p = r.results.find((x) => x.policy === policy);
  if (!p) return "";
  const { bucketMs, outstanding } = p.timeline;
  const series = outstanding.map((values, o) => ({
    label: p.perOrigin[o]?.id ?? `origin ${o}`,
    color: colorAt(o),
    points: values.map((v, b) => [(b * bucketMs) / 1000, v] as const),
  }));
  return lineChart(series, {
    title: `${policy}: requests running + waiting per origin over time`,
    xLabel: "simulated time (s)",
    yLabel: "requests at origin",
    yMin: 0,
  });
}

/** The hot-prefix picture: per-origin load for `prefix-hash` and `cost`, headed by those that ran. */
function originLoads(r: BenchResult): string {
  const shown = ["prefix-hash", "cost"].filter((p) => r.results.some((x) => x.policy === p));
  if (shown.length === 0) return "";
  return [
    `<h2>Per-origin load: ${shown.join(" vs ")}</h2>`,
    ...shown.map((p) => originLoad(r, p)),
  ].join("\n");
}

/**
 * One run's page; with `overSeeds` (`--seeds K`), the spread table over every seed comes first
 * and the charts are the first seed's.
 */
export function benchPage(r: BenchResult, overSeeds?: { seeds: number[]; table: string }): string {
  const targets = targetLines(r);
  const body = [
    overSeeds
      ? `<h2>Over seeds ${overSeeds.seeds.join(", ")}: mean (min-max)</h2>${pre([overSeeds.table])}` +
        `<h2>Seed ${r.seed}</h2>`
      : "",
    pre([...headerLines(r), "", resultsTable(r)]),
    targets.length > 0 ? `<h2>Targets for cost</h2>${pre(targets)}` : "",
    `<h2>Time to first token</h2>${ttftCdf(r)}`,
    `<h2>Cache hits</h2>${hitRates(r)}`,
    originLoads(r),
    `<p class="note">Simulated fleet of ${r.origins} engines (${escapeXml(r.profile)}), driven by the ` +
      `router's own core; see bench/sim/README.md for the engine model and its sources.</p>`,
  ].join("\n");
  return page(`llm-edge-router fleet benchmark: ${r.trace}`, body);
}

const meanOver = (s: FleetSweep) =>
  s.seeds.length > 1 ? ` (mean over seeds ${s.seeds.join(", ")})` : "";

export function fleetPage(s: FleetSweep): string {
  const policies = s.runs[0]?.results.map((p) => p.policy) ?? [];
  const sweep = (pick: (p: BenchResult["results"][number]) => number) =>
    policies.map((policy) => ({
      label: policy,
      color: colorOf(policy),
      points: s.sizes.map((n) => {
        const values = runsOfSize(s, n).flatMap((run) =>
          run.results.filter((x) => x.policy === policy).map(pick),
        );
        return [n, values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)] as const;
      }),
    }));
  const first = s.runs[0];
  const body = [
    first ? pre(headerLines(first).slice(0, 1)) : "",
    lineChart(
      sweep((p) => p.hitRate),
      {
        title: `Hit rate against fleet size${meanOver(s)}`,
        xLabel: "origins (log scale)",
        yLabel: "hit rate",
        xLog: true,
        xTicks: s.sizes,
        yMin: 0,
      },
    ),
    lineChart(
      sweep((p) => p.ttftMs.p99),
      {
        title: `p99 TTFT against fleet size${meanOver(s)}`,
        xLabel: "origins (log scale)",
        yLabel: "p99 TTFT (ms, log scale)",
        xLog: true,
        xTicks: s.sizes,
        yLog: true,
      },
    ),
    ...s.runs.map(
      (run) =>
        `<h2>${run.origins} origins, seed ${run.seed}</h2>` +
        pre([...headerLines(run), "", resultsTable(run)]),
    ),
  ].join("\n");
  return page(`llm-edge-router fleet sweep: ${first?.trace ?? ""}`, body);
}
