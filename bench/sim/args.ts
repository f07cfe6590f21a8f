/**
 * Command-line options of `npm run bench` and `npm run bench:fleet`, validated loudly: a bad
 * value stops the run with the option's name and the reason, before any work is done.
 */
import { existsSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_PROFILE, PROFILES } from "../../sim/engine/profiles.ts";
import { ARRIVAL_MODES, type ArrivalMode } from "../../sim/trace/arrivals.ts";
import { GENERATORS } from "../../sim/trace/generators.ts";
import { BYTES_PER_TOKEN, DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { POLICY_TYPES, type PolicyType } from "../../src/core/policies/index.ts";
import type { BenchSpec } from "./run/runner.ts";
import type { TraceSource } from "./workload/workload.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEFAULT_TRACE = fileURLToPath(
  new URL("../traces/conversation_trace.jsonl", import.meta.url),
);
/** Requests a synthetic workload generates unless `--limit` says otherwise. */
const SYNTHETIC_REQUESTS = 4000;
/** The machine has 2 cores: never more replays at once than that. */
const MAX_THREADS = 2;

export const USAGE = `usage: npm run bench|bench:fleet|bench:capacity -- [options]
  --trace PATH           Mooncake JSONL or Azure CSV (default: bench/traces/conversation_trace.jsonl)
  --format F             mooncake | azure | synthetic:${Object.keys(GENERATORS).join("|synthetic:")}
                         (default: from the file extension)
  --origins N            origins in the fleet (default 8)
  --load X               offered prefill work / fleet prefill capacity (default 0.8)
  --policies LIST        all, or a comma list of ${POLICY_TYPES.join(", ")}
  --profile NAME         ${Object.keys(PROFILES).join(" | ")} (default ${DEFAULT_PROFILE})
  --seed N               router, generator and arrival-jitter seed (default 1)
  --seeds K              run seeds N .. N+K-1 and show the spread over them (default 1)
  --limit N              replay the first N requests (synthetic: generate N, default ${SYNTHETIC_REQUESTS})
  --arrivals MODE        jitter (ties at seeded random times up to the next stamp, default) |
                         spread (ties evenly up to the next stamp) | burst (as recorded)
  --report-interval MS   engine load report period (default 1000)
  --report-delay MS      delay before a report reaches the router (default 100)
  --threads N            policies replayed at once, 0..${MAX_THREADS} (default ${MAX_THREADS}; 0 = this thread)
  --json PATH            results JSON (default bench/results/<trace>-<origins>o-load<load>.json,
                         bench:fleet: bench/results/fleet.json)
  --html PATH            HTML report (default beside the JSON)
  --sizes LIST           bench:fleet only: fleet sizes (default 2,4,8,16,32)
  --slo Q:MS             bench:capacity only: TTFT objective, Q one of p50, p90, p99
                         (default p90:2000; the suite sets one per workload)
  --resolution R         bench:capacity only: bisect until hi/lo <= 1+R (default 0.02)
  --max-probes N         bench:capacity only: probes per policy and seed (default 16)
  --suite NAME           bench:capacity only: run a workload set (standard | smoke)
  --out DIR              bench:capacity --suite only: output folder (default bench/results/capacity)
  (--load is ignored by bench:capacity: it searches the rate)`;

export interface CliOptions {
  spec: BenchSpec;
  policies: PolicyType[];
  threads: number;
  /** `--json`, resolved; undefined when not given. */
  json: string | undefined;
  /** `--html`, resolved; undefined when not given (then beside the JSON). */
  html: string | undefined;
  /** Names the default output files: `<trace>-<origins>o-load<load>`. */
  slug: string;
  /** `--sizes` of the fleet sweep. */
  sizes: number[];
  /** `--seed` .. `--seed` + `--seeds` - 1. */
  seeds: number[];
  /** bench:capacity: `--slo` as given (undefined: the workload's default). */
  slo: string | undefined;
  resolution: number;
  maxProbes: number;
  suite: string | undefined;
  out: string | undefined;
}

export class UsageError extends Error {}

function number(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isFinite(v) || v < min || v > max) {
    throw new UsageError(`--${name} must be a number in [${min}, ${max}], got "${text}"`);
  }
  return v;
}

function integer(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
) {
  const v = number(name, text, fallback, min, max);
  if (!Number.isInteger(v)) throw new UsageError(`--${name} must be an integer, got "${text}"`);
  return v;
}

function sourceOf(
  format: string | undefined,
  trace: string,
  seed: number,
  limit: number | undefined,
): TraceSource {
  const kind = format ?? (extname(trace) === ".csv" ? "azure" : "mooncake");
  if (kind.startsWith("synthetic:")) {
    const name = kind.slice("synthetic:".length);
    if (!GENERATORS[name]) {
      throw new UsageError(
        `--format ${kind}: known generators are ${Object.keys(GENERATORS).join(", ")}`,
      );
    }
    return { kind: "synthetic", name, count: limit ?? SYNTHETIC_REQUESTS, seed };
  }
  if (kind !== "mooncake" && kind !== "azure") {
    throw new UsageError(`--format must be mooncake, azure or synthetic:NAME, got "${kind}"`);
  }
  if (!existsSync(trace)) throw new UsageError(`--trace ${trace}: no such file`);
  return { kind, path: trace };
}

function policiesOf(text: string): PolicyType[] {
  if (text === "all") return [...POLICY_TYPES];
  const names = text.split(",").map((s) => s.trim());
  for (const name of names) {
    if (!(POLICY_TYPES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--policies: unknown policy "${name}"; known: ${POLICY_TYPES.join(", ")}`,
      );
    }
  }
  return names as PolicyType[];
}

export function parseCli(argv: readonly string[]): CliOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      trace: { type: "string" },
      format: { type: "string" },
      origins: { type: "string" },
      load: { type: "string" },
      policies: { type: "string" },
      profile: { type: "string" },
      seed: { type: "string" },
      limit: { type: "string" },
      arrivals: { type: "string" },
      "report-interval": { type: "string" },
      "report-delay": { type: "string" },
      threads: { type: "string" },
      json: { type: "string" },
      html: { type: "string" },
      sizes: { type: "string" },
      seeds: { type: "string" },
      slo: { type: "string" },
      resolution: { type: "string" },
      "max-probes": { type: "string" },
      suite: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) throw new UsageError("");
  const trace = resolve(values.trace ?? DEFAULT_TRACE);
  const seed = integer("seed", values.seed, 1, 0, 2 ** 31 - 1);
  const limit = values.limit === undefined ? undefined : integer("limit", values.limit, 0, 1, 1e7);
  const source = sourceOf(values.format, trace, seed, limit);
  const profile = values.profile ?? DEFAULT_PROFILE;
  if (!PROFILES[profile]) {
    throw new UsageError(
      `--profile must be one of ${Object.keys(PROFILES).join(", ")}, got "${profile}"`,
    );
  }
  const arrivals = (values.arrivals ?? "jitter") as ArrivalMode;
  if (!ARRIVAL_MODES.includes(arrivals)) {
    throw new UsageError(`--arrivals must be ${ARRIVAL_MODES.join(", ")}, got "${arrivals}"`);
  }
  const origins = integer("origins", values.origins, 8, 1, 256);
  const load = number("load", values.load, 0.8, 0.01, 10);
  const label = source.kind === "synthetic" ? `synthetic:${source.name}` : basename(trace);
  const spec: BenchSpec = {
    source,
    trace: label,
    limit: source.kind === "synthetic" ? undefined : limit,
    arrivals,
    load,
    origins,
    profile,
    chunkTokens: DEFAULT_CHUNK_BYTES / BYTES_PER_TOKEN,
    seed,
    reportIntervalMs: number("report-interval", values["report-interval"], 1000, 1, 600_000),
    reportDelayMs: number("report-delay", values["report-delay"], 100, 0, 600_000),
  };
  const slug = `${label.replace(/\.[a-z]+$/, "").replace(/[^A-Za-z0-9_-]+/g, "-")}-${origins}o-load${load}`;
  const sizes = (values.sizes ?? "2,4,8,16,32")
    .split(",")
    .map((s) => integer("sizes", s, 0, 1, 256));
  const seeds = integer("seeds", values.seeds, 1, 1, 100);
  return {
    spec,
    policies: policiesOf(values.policies ?? "all"),
    threads: integer("threads", values.threads, MAX_THREADS, 0, MAX_THREADS),
    json: values.json === undefined ? undefined : resolve(values.json),
    html: values.html === undefined ? undefined : resolve(values.html),
    slug,
    sizes,
    seeds: Array.from({ length: seeds }, (_, k) => seed + k),
    slo: values.slo,
    resolution: number("resolution", values.resolution, 0.02, 0.001, 1),
    maxProbes: integer("max-probes", values["max-probes"], 16, 1, 100),
    suite: values.suite,
    out: values.out === undefined ? undefined : resolve(values.out),
  };
}

/** Where results go: `--json`/`--html` if given, else bench/results/<name>.json and .html. */
export function outputPaths(options: CliOptions, name: string): { json: string; html: string } {
  const json = options.json ?? resolve(REPO_ROOT, "bench/results", `${name}.json`);
  return { json, html: options.html ?? json.replace(/(\.json)?$/, ".html") };
}

/** Run a CLI's main: a usage error prints the usage and exits 2 (0 for --help). */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    if (error instanceof UsageError) {
      console.error(error.message ? `${error.message}\n\n${USAGE}` : USAGE);
      process.exitCode = error.message ? 2 : 0;
      return;
    }
    console.error(error);
    process.exitCode = 1;
  });
}
