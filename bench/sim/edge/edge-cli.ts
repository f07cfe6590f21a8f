/**
 * What `npm run bench:edge` runs (../edge.ts): the configurations its options name, each over
 * every seed, on at most `--threads` worker threads; then the tables and the JSON. Results are
 * pure functions of the options (no wall-clock value enters the JSON).
 */
import { resolve } from "node:path";
import { toJson, writeFile } from "../../../sim/report/write.ts";
import { edgeSettings } from "../../../src/core/settings/edge-settings.ts";
import { REPO_ROOT } from "../args.ts";
import type { EdgeCliOptions } from "./edge-args.ts";
import type { EdgeSpec, SeedPair } from "./edge-pair.ts";
import type { RateFigures } from "./edge-rate.ts";
import { type PairSummary, pairTable, rateTable, summarisePairs } from "./edge-report.ts";
import { EdgeTasks } from "./edge-tasks.ts";

/** Bytes of every n-th sync are measured (counting costs CPU). */
const SAMPLE_EVERY = 16;
/** The outage starts at this share of the replay's arrival span. */
const OUTAGE_AT = 0.4;
/** How long a request holds its origin in the rate replay (a conversation request's order). */
const RATE_HOLD_MS = 5000;

function specOf(o: EdgeCliOptions, coordinators: number): EdgeSpec {
  return {
    bench: o.base.spec,
    policy: o.base.policies[0] as EdgeSpec["policy"],
    topology: {
      isolates: o.isolates,
      colos: o.colos,
      coordinators,
      rttNearMs: 2,
      rttFarMs: o.rttFarMs,
    },
    stickiness: { colo: o.coloStickiness, isolate: 0 },
    edge: {
      push: o.push,
      ...(o.flushMs === undefined ? {} : { flushMs: o.flushMs }),
      ...(o.rootIntervalMs === undefined ? {} : { rootIntervalMs: o.rootIntervalMs }),
    },
    outage: o.outageSeconds > 0 ? { at: OUTAGE_AT, durationMs: o.outageSeconds * 1000 } : null,
    sampleEvery: SAMPLE_EVERY,
    objectRtt: o.objectRtt,
  };
}

/** The configurations: the one the options name, or one per swept value. */
function configurations(o: EdgeCliOptions): { label: string; spec: EdgeSpec }[] {
  const base = specOf(o, o.coordinators[0] as number);
  const name = (s: EdgeSpec) =>
    `I=${s.topology.isolates} C=${s.topology.colos} S=${s.topology.coordinators} flush=${
      s.edge.flushMs ?? edgeSettings.parse({}).flushMs
    }ms ${(s.edge.push ?? edgeSettings.parse({}).push) ? "push" : "poll"}`;
  if (!o.sweep) return [{ label: name(base), spec: base }];
  return o.sweep.values.map((v) => {
    const spec: EdgeSpec = structuredClone(base);
    if (o.sweep?.name === "isolates") spec.topology.isolates = v;
    if (o.sweep?.name === "colos") spec.topology.colos = v;
    if (o.sweep?.name === "flush") spec.edge = { ...spec.edge, flushMs: v };
    return { label: name(spec), spec };
  });
}

export async function runEdgeCli(o: EdgeCliOptions): Promise<void> {
  const tasks = new EdgeTasks(o.base.threads);
  const started = Date.now();
  const log = (text: string) => process.stderr.write(`${text}\n`);
  try {
    const spec = o.base.spec;
    const title = `${spec.trace}, ${spec.origins} origins, load ${spec.load}${
      spec.limit ? `, first ${spec.limit} requests` : ""
    }, policy ${o.base.policies[0]}, seeds ${o.base.seeds.join(",")}`;
    let rates: (RateFigures & { coordinators: number })[] = [];
    let summaries: PairSummary[] = [];
    let runs: { label: string; pairs: SeedPair[] }[] = [];
    if (o.rates.length > 0) {
      const jobs = o.rates.flatMap((rateRps) =>
        o.coordinators.map(async (coordinators) => {
          const rate = { rateRps, seconds: o.rateSeconds, holdMs: RATE_HOLD_MS };
          const task = { kind: "rate" as const, spec: specOf(o, coordinators), rate, seed: 1 };
          const r = await tasks.run<RateFigures>(task);
          log(`rate ${rateRps}/s S=${coordinators} done`);
          return { ...r, coordinators };
        }),
      );
      rates = await Promise.all(jobs);
      console.log(`Edge protocol at pool rates (${title}; I=${o.isolates}, C=${o.colos})`);
      console.log(rateTable(rates));
    } else {
      const configs = configurations(o);
      runs = await Promise.all(
        configs.map(async ({ label, spec: s }) => {
          const pairs = await Promise.all(
            o.base.seeds.map((seed) => tasks.run<SeedPair>({ kind: "pair", spec: s, seed })),
          );
          log(
            `${label}: ${pairs.length} seeds done (${Math.round((Date.now() - started) / 1000)} s)`,
          );
          return { label, pairs };
        }),
      );
      summaries = runs.map((r) => summarisePairs(r.label, r.pairs));
      console.log(`Edge vs synchronous, paired (${title})`);
      console.log(pairTable(summaries));
    }
    const sweep = o.sweep ? `-${o.sweep.name}` : o.rates.length > 0 ? "-rate" : "";
    const slug = o.base.slug.replace(/-load[\d.]+$/, "");
    const json = o.base.json ?? resolve(REPO_ROOT, "bench/results", `edge-${slug}${sweep}.json`);
    writeFile(
      json,
      toJson({
        title,
        options: { ...o, base: { spec, policies: o.base.policies, seeds: o.base.seeds } },
        summaries,
        rates,
        runs,
      }),
    );
    log(`wrote ${json} (${Math.round((Date.now() - started) / 1000)} s)`);
  } finally {
    await tasks.close();
  }
}
