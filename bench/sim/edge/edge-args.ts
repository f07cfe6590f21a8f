/**
 * Command-line options of `npm run bench:edge`: the edge topology, sync parameters, outage,
 * sweep and rate probe, validated loudly like the shared options (../args.ts), which take the
 * rest of the command line (trace, origins, load, limit, seeds, threads, json).
 */
import { parseArgs } from "node:util";
import { parseCommandLine } from "../../../sim/cli/cli-args.ts";
import { type CliOptions, parseCli, UsageError } from "../args.ts";

export const EDGE_USAGE = `usage: npm run bench:edge -- [options]   (and bench's --trace --origins --load --limit
                         --seed --seeds --threads --json; --policies takes one policy, default cost)
  --isolates N           isolates I (default 32)
  --colos N              colos C (default 4)
  --coordinators N       coordinator objects S (default 1)
  --colo-stickiness P    probability a request reaches its user's home colo (default 0.9)
  --rtt-far MS           added round trip to the antipodal colo (default 150; 2 ms within one)
  --flush-ms MS          edge.flushMs (default the setting's, 100)
  --root-interval-ms MS  edge.rootIntervalMs (default the setting's, 500)
  --push 0|1             edge.push: 1 (default) sockets and frames, 0 sync calls only
  --object-rtt 0|1       1 (default): object mode's requests wait a round trip to the pool's
                         object (in the middle colo) before their origin fetch, as the Worker's
                         do; 0: network time is zero in both modes, as in npm run bench
  --outage-s S           a coordinator outage of S seconds at 40% of the replay (default 60; 0 none)
  --sweep NAME=LIST      isolates=1,8,32,128 | colos=1,4,16 | flush=100,250,500,1000,2000: one
                         paired row per value, everything else as given
  --rate LIST            protocol replay at these pool rates (requests/s) for each S in
                         --coordinators (a comma list here), no engines (edge-rate.ts)
  --rate-seconds S       seconds a rate probe measures (default 4), after a warm-up of 6 s
                         (the 5 s hold + 1 s) so requests start and end in them`;

export const SWEEPS = ["isolates", "colos", "flush"] as const;
export type SweepName = (typeof SWEEPS)[number];

export interface EdgeCliOptions {
  base: CliOptions;
  isolates: number;
  colos: number;
  coordinators: number[];
  coloStickiness: number;
  rttFarMs: number;
  flushMs: number | undefined;
  /** edge.push (sockets and frames; false: sync calls only). */
  push: boolean;
  rootIntervalMs: number | undefined;
  objectRtt: boolean;
  outageSeconds: number;
  sweep: { name: SweepName; values: number[] } | null;
  rates: number[];
  rateSeconds: number;
}

function int(name: string, text: string | undefined, fallback: number, min: number, max: number) {
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got "${text}"`);
  }
  return v;
}

function list(name: string, text: string, min: number, max: number): number[] {
  return text.split(",").map((s) => int(name, s.trim(), 0, min, max));
}

const EDGE_OPTIONS = {
  isolates: { type: "string" },
  colos: { type: "string" },
  coordinators: { type: "string" },
  "colo-stickiness": { type: "string" },
  "rtt-far": { type: "string" },
  "flush-ms": { type: "string" },
  "root-interval-ms": { type: "string" },
  "object-rtt": { type: "string" },
  push: { type: "string" },
  "outage-s": { type: "string" },
  sweep: { type: "string" },
  rate: { type: "string" },
  "rate-seconds": { type: "string" },
} as const;

export function parseEdgeCli(argv: readonly string[]): EdgeCliOptions {
  const { tokens } = parseArgs({
    args: [...argv],
    strict: false,
    tokens: true,
    options: EDGE_OPTIONS,
  });
  const rest: string[] = [];
  const mine: string[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t?.kind !== "option") {
      if (t?.kind === "positional") rest.push(t.value);
      continue;
    }
    const target = t.name in EDGE_OPTIONS ? mine : rest;
    target.push(t.rawName);
    if (t.value !== undefined) {
      if (t.inlineValue) target[target.length - 1] = `${t.rawName}=${t.value}`;
      else target.push(t.value);
    }
  }
  const { values } = parseCommandLine({ args: mine, options: EDGE_OPTIONS });
  if (!rest.some((a) => a === "--policies" || a.startsWith("--policies="))) {
    rest.push("--policies", "cost");
  }
  const base = parseCli(rest, "bench:edge");
  if (base.policies.length !== 1) {
    throw new UsageError("--policies: bench:edge compares one policy (default cost)");
  }
  const stickiness = Number(values["colo-stickiness"] ?? "0.9");
  if (!(stickiness >= 0 && stickiness <= 1)) {
    throw new UsageError(`--colo-stickiness must be in [0, 1], got "${values["colo-stickiness"]}"`);
  }
  let sweep: EdgeCliOptions["sweep"] = null;
  if (values.sweep !== undefined) {
    const [name, text] = values.sweep.split("=");
    if (!(SWEEPS as readonly string[]).includes(name ?? "") || !text) {
      throw new UsageError(`--sweep must be NAME=LIST, NAME one of ${SWEEPS.join(", ")}`);
    }
    sweep = { name: name as SweepName, values: list("sweep", text, 1, 30_000) };
  }
  return {
    base,
    isolates: int("isolates", values.isolates, 32, 1, 1024),
    colos: int("colos", values.colos, 4, 1, 64),
    coordinators: list("coordinators", values.coordinators ?? "1", 1, 64),
    coloStickiness: stickiness,
    rttFarMs: int("rtt-far", values["rtt-far"], 150, 0, 1000),
    flushMs:
      values["flush-ms"] === undefined
        ? undefined
        : int("flush-ms", values["flush-ms"], 250, 10, 30_000),
    rootIntervalMs:
      values["root-interval-ms"] === undefined
        ? undefined
        : int("root-interval-ms", values["root-interval-ms"], 500, 50, 60_000),
    objectRtt: int("object-rtt", values["object-rtt"], 1, 0, 1) === 1,
    push: int("push", values.push, 1, 0, 1) === 1,
    outageSeconds: int("outage-s", values["outage-s"], 60, 0, 3600),
    sweep,
    rates: values.rate === undefined ? [] : list("rate", values.rate, 1, 1_000_000),
    rateSeconds: int("rate-seconds", values["rate-seconds"], 4, 1, 600),
  };
}
