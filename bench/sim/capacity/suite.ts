/**
 * The documented workload sets of `npm run bench:capacity -- --suite NAME`: each workload is the
 * command line it stands for, so any row of the suite's table can be rerun alone. The objective
 * per workload is the smallest whole second at least 1.15x the workload's no-cache floor (the
 * p90 of each prompt's prefill time alone on an idle engine), so a cache-blind policy can meet
 * it at low load and a policy's capacity is never "zero by construction" (bench/sim/README.md,
 * "Workload set"). Flags given with `--suite` (`--seeds`, `--policies`, `--limit`, `--threads`,
 * `--resolution`, `--max-probes`, `--seed`) apply to every workload.
 */
import { resolve } from "node:path";
import { formatTable } from "../../../sim/report/table.ts";
import { toJson, writeFile } from "../../../sim/report/write.ts";
import { parseCli, REPO_ROOT, UsageError } from "../args.ts";
import { formatRatio } from "../edge/paired-stats.ts";
import { formatSpread } from "../report/spread.ts";
import { capacityOf } from "./capacity-cli.ts";
import { capacityPage } from "./capacity-report.ts";
import { type CapacityPolicyResult, type CapacityResult, labelOf } from "./capacity-run.ts";
import { ProbePool } from "./probe-pool.ts";

export interface SuiteWorkload {
  name: string;
  /** The workload's own flags (trace, origins, profile, objective). */
  args: readonly string[];
}

const CONVERSATION = ["--trace", "bench/traces/conversation_trace.jsonl"];

const STANDARD: readonly SuiteWorkload[] = [
  { name: "conversation-8", args: [...CONVERSATION, "--origins", "8", "--slo", "p90:2000"] },
  { name: "conversation-16", args: [...CONVERSATION, "--origins", "16", "--slo", "p90:2000"] },
  { name: "conversation-32", args: [...CONVERSATION, "--origins", "32", "--slo", "p90:2000"] },
  {
    name: "synthetic-8",
    args: ["--trace", "bench/traces/synthetic_trace.jsonl", "--origins", "8", "--slo", "p90:3000"],
  },
  {
    name: "azure-conv-8",
    args: [
      "--trace",
      "bench/traces/AzureLLMInferenceTrace_conv.csv",
      "--origins",
      "8",
      "--slo",
      "p90:1000",
    ],
  },
  {
    name: "azure-code-8",
    args: [
      "--trace",
      "bench/traces/AzureLLMInferenceTrace_code.csv",
      "--origins",
      "8",
      "--slo",
      "p90:1000",
    ],
  },
  // 20,000 generated requests: at 4,000 the second half lasts 25-50 s at capacity, a few
  // requests' end-to-end times, and completions lag arrivals whenever the rate moves.
  {
    name: "rag-8",
    args: ["--format", "synthetic:rag", "--limit", "20000", "--origins", "8", "--slo", "p90:1000"],
  },
  {
    name: "sessions-8",
    args: [
      "--format",
      "synthetic:sessions",
      "--limit",
      "20000",
      "--origins",
      "8",
      "--slo",
      "p90:1000",
    ],
  },
  // Coding-agent sessions (sim/trace/generators-agentic.ts): a call averages ~32K prompt
  // tokens, 8.5x a sessions turn, so 3,000 calls (~95 sessions) are 1.3x the prompt tokens of
  // 20,000 sessions turns. No-cache floor 4.0-4.4 s over the report samples (p90 of
  // 55K-token prompts): 1.15x the largest is 5.01 s, hence p90 6 s.
  {
    name: "agentic-8",
    args: [
      "--format",
      "synthetic:agentic",
      "--limit",
      "3000",
      "--origins",
      "8",
      "--slo",
      "p90:6000",
    ],
  },
  {
    name: "conversation-8-70b",
    args: [
      ...CONVERSATION,
      "--origins",
      "8",
      "--profile",
      "llama-3.1-70b-4xh100",
      "--slo",
      "p90:5000",
    ],
  },
];

/** Where edge coordination's capacity is compared with object mode's (`--coordination`). */
const EDGE = ["conversation-8", "conversation-16", "synthetic-8"];

export const SUITES: Readonly<Record<string, readonly SuiteWorkload[]>> = {
  standard: STANDARD,
  edge: STANDARD.filter((w) => EDGE.includes(w.name)),
};

/** Flags a suite sets per workload, which the command line may not override. */
const PER_WORKLOAD = ["--trace", "--format", "--origins", "--profile", "--slo", "--json", "--html"];

function withoutSuite(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = (argv[i] as string).split("=")[0] as string;
    if (flag === "--suite" || flag === "--out") {
      if (!(argv[i] as string).includes("=")) i++;
      continue;
    }
    if (PER_WORKLOAD.includes(flag)) {
      throw new UsageError(`${flag} is set per workload by --suite; run that workload alone`);
    }
    out.push(argv[i] as string);
  }
  return out;
}

/**
 * Policies (under each coordination mode) down, workloads across: capacity mean (min-max), then
 * the multiple of round-robin's, then with both modes the paired edge / object ratio.
 */
function summaryTables(runs: readonly { name: string; result: CapacityResult }[]): string {
  const labels = runs[0]?.result.results.map(labelOf) ?? [];
  const rows = (f: (p: CapacityPolicyResult) => string) =>
    labels.map((label) => [
      label,
      ...runs.map(({ result }) => {
        const p = result.results.find((x) => labelOf(x) === label);
        return p ? f(p) : "-";
      }),
    ]);
  const paired = runs[0]?.result.edgeRatio.map((e) => e.policy) ?? [];
  const ratios = paired.map((policy) => [
    policy,
    ...runs.map(({ result }) => {
      const e = result.edgeRatio.find((x) => x.policy === policy)?.ratio;
      return e ? formatRatio(e) : "-";
    }),
  ]);
  const names = runs.map((r) => r.name);
  return [
    formatTable(
      [
        ["objective", ...runs.map((r) => r.result.objective)],
        ...rows((p) => formatSpread(p.capacityRps, 2)),
      ],
      { header: ["capacity req/s", ...names] },
    ),
    formatTable(
      rows((p) => p.vsRoundRobin?.toFixed(2) ?? "-"),
      { header: ["x round-robin", ...names] },
    ),
    ...(ratios.length > 0 ? [formatTable(ratios, { header: ["edge / object", ...names] })] : []),
  ].join("\n\n");
}

export async function runSuite(argv: readonly string[], suite: string, outDir?: string) {
  const workloads = SUITES[suite];
  if (!workloads) {
    throw new UsageError(
      `--suite must be one of ${Object.keys(SUITES).join(", ")}, got "${suite}"`,
    );
  }
  const common = withoutSuite(argv);
  const out = outDir ?? resolve(REPO_ROOT, "bench/results/capacity");
  const options = workloads.map((w) => ({
    w,
    o: parseCli(
      [...w.args.map((a) => (a.startsWith("bench/") ? resolve(REPO_ROOT, a) : a)), ...common],
      "bench:capacity",
    ),
  }));
  const started = performance.now();
  const pool = new ProbePool(options[0]?.o.threads ?? 0);
  const runs: { name: string; args: string[]; result: CapacityResult }[] = [];
  try {
    for (const { w, o } of options) {
      const t0 = performance.now();
      const result = await capacityOf(o, o.slo as string, pool);
      writeFile(resolve(out, `${w.name}.json`), toJson(result));
      writeFile(resolve(out, `${w.name}.html`), capacityPage(result));
      process.stderr.write(`${w.name}: ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
      runs.push({ name: w.name, args: [...w.args, ...common], result });
    }
  } finally {
    await pool.close();
  }
  const table = summaryTables(runs);
  console.log(
    `\nsuite ${suite}: capacity req/s, mean (min-max) over seeds, x round-robin\n\n${table}`,
  );
  writeFile(
    resolve(out, "suite.json"),
    toJson({
      suite,
      workloads: runs.map(({ name, args, result }) => ({
        name,
        command: `npm run bench:capacity -- ${args.join(" ")}`,
        objective: result.objective,
        results: result.results.map((p) => ({
          policy: p.policy,
          coordination: p.coordination,
          capacityRps: p.capacityRps,
          vsRoundRobin: p.vsRoundRobin,
          hitRateVsFleetOracle: p.atCapacity?.hitRateVsFleetOracle ?? null,
        })),
        edgeRatio: result.edgeRatio.map(({ policy, seeds, ratio }) => ({ policy, seeds, ratio })),
      })),
    }),
  );
  process.stderr.write(`suite in ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
  console.log(`\nwrote ${out}/*.json, *.html and suite.json`);
}
