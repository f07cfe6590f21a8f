/**
 * Command-line options of `npm run bench`, `bench:fleet`, `bench:pd`, `bench:capacity` and the
 * shared part of `bench:edge`, validated loudly: a bad value, or an option the CLI does not
 * take (`--slo` is bench:capacity's), stops the run with the option's name and the reason,
 * before any work is done (sim/cli/cli-args.ts).
 */
import { existsSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCommandLine, UsageError } from "../../sim/cli/cli-args.ts";
import { COORDINATION_MODES, type CoordinationMode } from "../../sim/edge/coordination.ts";
import { DEFAULT_PROFILE, PROFILES } from "../../sim/engine/profiles.ts";
import { type FleetPart, GPU_KINDS, parseFleet } from "../../sim/fleet/gpu-fleet.ts";
import {
  DISAGGREGATION_MODES,
  type DisaggregationMode,
  type PdFleet,
} from "../../sim/fleet/pd-fleet.ts";
import type { PolicyChoice } from "../../sim/fleet/policy-choice.ts";
import type { BenchSpec } from "../../sim/fleet/runner.ts";
import { ARRIVAL_MODES, type ArrivalMode } from "../../sim/trace/arrivals.ts";
import { GENERATORS } from "../../sim/trace/generators.ts";
import type { TraceSource } from "../../sim/workload/workload.ts";
import { BYTES_PER_TOKEN, DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { POLICY_TYPES, type PolicyType } from "../../src/core/policies/index.ts";
import { SPLITS, type Split } from "./capacity/samples.ts";
import { tunedChoice } from "./capacity/tuned.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DEFAULT_TRACE = fileURLToPath(
  new URL("../traces/conversation_trace.jsonl", import.meta.url),
);
/** Requests a synthetic workload generates unless `--limit` says otherwise. */
const SYNTHETIC_REQUESTS = 4000;
/** The machine has 2 cores: never more replays at once than that. */
const MAX_THREADS = 2;

export const USAGE = `usage: npm run bench|bench:fleet|bench:pd|bench:capacity|bench:tune -- [options]
  --trace PATH           Mooncake JSONL or Azure CSV (default: bench/traces/conversation_trace.jsonl)
  --format F             mooncake | azure | synthetic:${Object.keys(GENERATORS).join("|synthetic:")}
                         (default: from the file extension)
  --origins N            origins in the fleet (default 8)
  --load X               offered prefill work / fleet prefill capacity (default 0.8)
  --policies LIST        all, or a comma list of ${POLICY_TYPES.join(", ")}
                         (bench:capacity: NAME@tuned runs a baseline at bench/sim/tuned.json's values)
  --profile NAME         ${Object.keys(PROFILES).join(" | ")} (default ${DEFAULT_PROFILE})
  --fleet KIND:N,...     a mixed fleet of ${Object.keys(GPU_KINDS).join(", ")} (e.g. h100:2,a100:4,l40s:2);
                         sets the origins; the router is told one speed, the fleet's mean
  --fleet-prior P        with --fleet: mean (default) | exact (each origin's own speed, what a
                         perfectly calibrated router would be told)
  --seed N               router, generator and arrival-jitter seed (default 1)
  --seeds K              run seeds N .. N+K-1 and show the spread over them (default 1)
  --limit N              replay the first N requests (synthetic: generate N, default ${SYNTHETIC_REQUESTS})
  --arrivals MODE        jitter (ties at seeded random times up to the next stamp, default) |
                         spread (ties evenly up to the next stamp) | burst (as recorded)
  --report-interval MS   this router's engine webhooks: period (default 1000)
  --report-delay MS      ... and delay before one reaches the router (default 100)
  --engine-delay MS      delay of what baselines read from engines directly: llm-d's 50 ms
                         scrapes, SGLang's 5 s polls, KV events (default 10)
  --prefill-calibration LIST
                         settings' prefill speed = profile nominal x each factor; policies that
                         read it (cost) run once per factor (default 1; e.g. 0.7,1,1.3)
  --output-scale X       output lengths times X, e.g. 4 for long outputs (default 1)
  --pd P:D               a P/D fleet: P prefill and D decode origins (P + D = --origins, which
                         it sets when not given); default: every origin aggregated
  --disaggregation MODE  with --pd: ${DISAGGREGATION_MODES.join(" | ")} (default conditional)
  --min-uncached N       with --pd, conditional: the rule's minUncachedTokens (default 2048)
  --max-uncached-fraction F   ... its maxUncachedFraction (default 1)
  --prefill-busy-ms MS   ... its prefillBusyMs (default 100)
  --prefill-serves-whole ... its prefillServesWhole: idle prefill origins serve whole requests
  --threads N            policies replayed at once, 0..${MAX_THREADS} (default ${MAX_THREADS}; 0 = this thread)
  --json PATH            results JSON (default bench/results/<trace>-<origins>o-load<load>.json,
                         bench:fleet: bench/results/fleet.json)
  --html PATH            HTML report (default beside the JSON)
  --sizes LIST           bench:fleet only: fleet sizes (default 2,4,8,16,32)
  --modes LIST           bench:pd only: P/D modes beside the aggregated fleet
                         (default conditional,always)
  --slo Q:MS             bench:capacity only: TTFT objective, Q one of p50, p90, p99
                         (default p90:2000; the suite sets one per workload)
  --resolution R         bench:capacity only: bisect until hi/lo <= 1+R (default 0.02)
  --max-probes N         bench:capacity only: probes per policy and seed (default 16)
  --coordination LIST    bench:capacity only: search each policy per mode, object and/or edge:
                         object, the pool's one router after the round trip to it; edge, 32
                         isolates in 4 colos syncing with 1 coordinator (bench:edge's defaults);
                         with both, the paired ratio edge / object (default: neither, routing
                         with no network time)
  --split tune|report    bench:capacity only: sample seeds from the trace's first (tune) or
                         second (report) half, one disjoint window per seed (default: whole trace)
  --suite NAME           bench:capacity only: run a workload set (standard | edge)
  --out DIR              bench:capacity --suite only: output folder (default bench/results/capacity)
  (bench:capacity takes no --load: it searches the rate)`;

export interface CliOptions {
  spec: BenchSpec;
  policies: PolicyType[];
  /** The policies with their labels and parameters (`dynamo@tuned`; bench:capacity). */
  choices: PolicyChoice[];
  /** bench:capacity: `--split` (null: the whole workload). */
  split: Split | null;
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
  /** bench:pd: `--modes`, the P/D modes beside the aggregated fleet. */
  modes: DisaggregationMode[];
  /** bench:capacity: `--slo` as given (undefined: the workload's default). */
  slo: string | undefined;
  resolution: number;
  maxProbes: number;
  /** bench:capacity: `--coordination`, the modes to search each policy under (empty: none). */
  coordination: CoordinationMode[];
  suite: string | undefined;
  out: string | undefined;
}

export { UsageError };

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

/** `--pd P:D` and the disaggregation options, or null for an aggregated fleet. */
function pdOf(values: Record<string, string | boolean | undefined>): PdFleet | null {
  const text = values.pd as string | undefined;
  const rest = [
    "disaggregation",
    "min-uncached",
    "max-uncached-fraction",
    "prefill-busy-ms",
    "prefill-serves-whole",
  ];
  if (text === undefined) {
    const stray = rest.find((name) => values[name] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --pd`);
    return null;
  }
  const match = /^(\d+):(\d+)$/.exec(text);
  if (!match) throw new UsageError(`--pd must be PREFILL:DECODE, e.g. 2:6, got "${text}"`);
  const prefill = integer("pd", match[1], 0, 1, 255);
  const decode = integer("pd", match[2], 0, 1, 255);
  const mode = (values.disaggregation as string | undefined) ?? "conditional";
  if (!(DISAGGREGATION_MODES as readonly string[]).includes(mode)) {
    throw new UsageError(
      `--disaggregation must be ${DISAGGREGATION_MODES.join(", ")}, got "${mode}"`,
    );
  }
  const rule = {
    minUncachedTokens: optional(values, "min-uncached", (t) =>
      integer("min-uncached", t, 0, 0, 1e9),
    ),
    maxUncachedFraction: optional(values, "max-uncached-fraction", (t) =>
      number("max-uncached-fraction", t, 0, 0, 1),
    ),
    prefillBusyMs: optional(values, "prefill-busy-ms", (t) =>
      integer("prefill-busy-ms", t, 0, 0, 3_600_000),
    ),
    prefillServesWhole: values["prefill-serves-whole"] === true ? true : undefined,
  };
  const overrides = Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined));
  if (mode !== "conditional" && Object.keys(overrides).length > 0) {
    throw new UsageError(`the rule's options are for --disaggregation conditional, not ${mode}`);
  }
  return { prefill, decode, mode: mode as DisaggregationMode, rule: overrides };
}

/** `--fleet`, or null for a fleet of `--profile`. */
function fleetOf(values: Record<string, string | boolean | undefined>): FleetPart[] | null {
  const text = values.fleet;
  if (typeof text !== "string") return null;
  try {
    return parseFleet(text);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function fleetPriorOf(text: string | boolean | undefined, gpus: FleetPart[] | null) {
  if (text === undefined) return undefined;
  if (!gpus) throw new UsageError("--fleet-prior needs --fleet");
  if (text !== "mean" && text !== "exact") {
    throw new UsageError(`--fleet-prior must be mean or exact, got "${text}"`);
  }
  return text;
}

function modesOf(text: string): DisaggregationMode[] {
  const modes = text.split(",").map((s) => s.trim());
  for (const mode of modes) {
    if (!(DISAGGREGATION_MODES as readonly string[]).includes(mode)) {
      throw new UsageError(
        `--modes: unknown mode "${mode}"; known: ${DISAGGREGATION_MODES.join(", ")}`,
      );
    }
  }
  return modes as DisaggregationMode[];
}

function optional<T>(
  values: Record<string, string | boolean | undefined>,
  name: string,
  parse: (text: string) => T,
): T | undefined {
  const text = values[name];
  return typeof text === "string" ? parse(text) : undefined;
}

function policiesOf(text: string, tuned: boolean): PolicyChoice[] {
  if (text === "all") return POLICY_TYPES.map((policy) => ({ policy, label: policy, params: {} }));
  return text.split(",").map((item) => {
    const [name = "", suffix] = item.trim().split("@");
    if (!(POLICY_TYPES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--policies: unknown policy "${name}"; known: ${POLICY_TYPES.join(", ")}`,
      );
    }
    if (suffix === undefined) return { policy: name as PolicyType, label: name, params: {} };
    if (suffix !== "tuned" || !tuned) {
      throw new UsageError(`--policies: "${item.trim()}": only bench:capacity takes NAME@tuned`);
    }
    try {
      return tunedChoice(name as PolicyType);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  });
}

function splitOf(text: string | undefined): Split | null {
  if (text === undefined) return null;
  if (!(SPLITS as readonly string[]).includes(text)) {
    throw new UsageError(`--split must be ${SPLITS.join(" or ")}, got "${text}"`);
  }
  return text as Split;
}

function coordinationOf(text: string | undefined): CoordinationMode[] {
  if (text === undefined) return [];
  const modes = text.split(",").map((s) => s.trim());
  for (const mode of modes) {
    if (!(COORDINATION_MODES as readonly string[]).includes(mode)) {
      throw new UsageError(
        `--coordination: unknown mode "${mode}"; known: ${COORDINATION_MODES.join(", ")}`,
      );
    }
  }
  if (new Set(modes).size !== modes.length) {
    throw new UsageError(`--coordination lists a mode twice: "${text}"`);
  }
  return modes as CoordinationMode[];
}

function calibrationOf(text: string): number[] {
  const factors = text.split(",").map((s) => number("prefill-calibration", s.trim(), 1, 0.05, 20));
  if (new Set(factors).size !== factors.length) {
    throw new UsageError(`--prefill-calibration lists a factor twice: "${text}"`);
  }
  return factors;
}

/** The options every bench CLI here takes. */
const COMMON_OPTIONS = {
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
  "engine-delay": { type: "string" },
  "prefill-calibration": { type: "string" },
  "output-scale": { type: "string" },
  pd: { type: "string" },
  disaggregation: { type: "string" },
  "min-uncached": { type: "string" },
  "max-uncached-fraction": { type: "string" },
  "prefill-busy-ms": { type: "string" },
  "prefill-serves-whole": { type: "boolean" },
  threads: { type: "string" },
  json: { type: "string" },
  html: { type: "string" },
  seeds: { type: "string" },
  fleet: { type: "string" },
  "fleet-prior": { type: "string" },
} as const;
const { load: _load, ...CAPACITY_COMMON } = COMMON_OPTIONS;
/** bench:fleet sweeps sizes of one GPU kind: no --fleet. */
const { fleet: _fleet, "fleet-prior": _prior, ...FLEET_COMMON } = COMMON_OPTIONS;
/** bench:capacity's and bench:tune's options. */
const CAPACITY_OPTIONS = {
  ...CAPACITY_COMMON,
  slo: { type: "string" },
  resolution: { type: "string" },
  "max-probes": { type: "string" },
  coordination: { type: "string" },
  suite: { type: "string" },
  split: { type: "string" },
  out: { type: "string" },
} as const;

/** The CLI's options: the common ones, and those only it takes (USAGE marks them). */
const OPTIONS = {
  bench: COMMON_OPTIONS,
  "bench:edge": COMMON_OPTIONS,
  "bench:fleet": { ...FLEET_COMMON, sizes: { type: "string" } },
  "bench:pd": { ...COMMON_OPTIONS, modes: { type: "string" } },
  "bench:capacity": CAPACITY_OPTIONS,
  "bench:tune": CAPACITY_OPTIONS,
} as const;
export type BenchCli = keyof typeof OPTIONS;
/** Every option of any of them: those a CLI does not take are refused, so never set. */
type AnyOptions = typeof COMMON_OPTIONS &
  (typeof OPTIONS)["bench:fleet"] &
  (typeof OPTIONS)["bench:pd"] &
  (typeof OPTIONS)["bench:capacity"];

/** `argv` as the bench CLI `cli` takes it; only bench:capacity runs `NAME@tuned` policies. */
export function parseCli(argv: readonly string[], cli: BenchCli = "bench"): CliOptions {
  const options = OPTIONS[cli] as AnyOptions;
  const { values } = parseCommandLine({ args: argv, options });
  const tuned = cli === "bench:capacity";
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
  const pd = pdOf(values);
  const gpus = fleetOf(values);
  if (gpus && (pd || values.profile !== undefined)) {
    throw new UsageError("--fleet sets every origin's GPU: not with --pd or --profile");
  }
  const fleetSize = pd ? pd.prefill + pd.decode : gpus ? gpus.reduce((a, p) => a + p.count, 0) : 8;
  const origins = integer("origins", values.origins, fleetSize, 1, 256);
  if ((pd || gpus) && origins !== fleetSize) {
    const given = pd ? `--pd ${pd.prefill}:${pd.decode}` : `--fleet ${values.fleet}`;
    throw new UsageError(`${given} is ${fleetSize} origins, not ${origins}`);
  }
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
    fleet: gpus,
    fleetPrior: fleetPriorOf(values["fleet-prior"], gpus),
    chunkTokens: DEFAULT_CHUNK_BYTES / BYTES_PER_TOKEN,
    seed,
    reportIntervalMs: number("report-interval", values["report-interval"], 1000, 1, 600_000),
    reportDelayMs: number("report-delay", values["report-delay"], 100, 0, 600_000),
    engineDelayMs: number("engine-delay", values["engine-delay"], 10, 0, 600_000),
    prefillCalibration: calibrationOf(values["prefill-calibration"] ?? "1"),
    outputScale: number("output-scale", values["output-scale"], 1, 0.01, 100),
    pd,
  };
  const prior = spec.fleetPrior === "exact" ? "-exact" : "";
  const mixed = gpus ? `-${gpus.map((p) => `${p.gpu}x${p.count}`).join("-")}${prior}` : "";
  const fleet = pd ? `-pd${pd.prefill}x${pd.decode}-${pd.mode}` : mixed;
  const outputs = spec.outputScale === 1 ? "" : `-out${spec.outputScale}`;
  const name = label.replace(/\.[a-z]+$/, "").replace(/[^A-Za-z0-9_-]+/g, "-");
  const slug = `${name}-${origins}o${fleet}${outputs}-load${load}`;
  const sizes = (values.sizes ?? "2,4,8,16,32")
    .split(",")
    .map((s) => integer("sizes", s, 0, 1, 256));
  const seeds = integer("seeds", values.seeds, 1, 1, 100);
  const choices = policiesOf(values.policies ?? "all", tuned);
  return {
    spec,
    policies: choices.map((c) => c.policy),
    choices,
    split: splitOf(values.split),
    threads: integer("threads", values.threads, MAX_THREADS, 0, MAX_THREADS),
    json: values.json === undefined ? undefined : resolve(values.json),
    html: values.html === undefined ? undefined : resolve(values.html),
    slug,
    sizes,
    seeds: Array.from({ length: seeds }, (_, k) => seed + k),
    modes: modesOf(values.modes ?? "conditional,always"),
    slo: values.slo,
    resolution: number("resolution", values.resolution, 0.02, 0.001, 1),
    maxProbes: integer("max-probes", values["max-probes"], 16, 1, 100),
    coordination: coordinationOf(values.coordination),
    suite: values.suite,
    out: values.out === undefined ? undefined : resolve(values.out),
  };
}

/** Where results go: `--json`/`--html` if given, else bench/results/<name>.json and .html. */
export function outputPaths(options: CliOptions, name: string): { json: string; html: string } {
  const json = options.json ?? resolve(REPO_ROOT, "bench/results", `${name}.json`);
  return { json, html: options.html ?? json.replace(/(\.json)?$/, ".html") };
}
