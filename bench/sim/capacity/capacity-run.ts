/**
 * A capacity run: for every policy and seed, the highest offered rate at which the objective
 * holds and the fleet keeps up (`search.ts`, `verdict.ts`), with the spread over seeds and
 * the figures at each policy's capacity point, plus every probe so a reader can audit the
 * search. Seed 1's search starts from half the rate of `--load 1` and steps by 1.5; each later
 * seed of a policy starts from the previous seed's capacity with a small step, which brackets
 * in two or three probes. Searches run concurrently over one probe pool; every probe is a pure
 * function of its task, so the result does not depend on which finished first.
 *
 * With coordination modes (`--coordination object,edge`, ../edge/coordination.ts) every policy
 * is searched once per mode, and with both, each seed's edge capacity over its object capacity
 * (same seed, same arrivals) gives the paired ratio with its 95% CI over seeds.
 */
import { profileNamed } from "../../../sim/engine/profiles.ts";
import { round } from "../../../sim/report/stats.ts";
import type { PolicyType } from "../../../src/core/policies/index.ts";
import type { Coordination, CoordinationMode } from "../edge/coordination.ts";
import { type RatioStats, ratioStats } from "../edge/paired-stats.ts";
import { type Spread, spreadOf } from "../report/spread.ts";
import { type BenchSpec, withSeed } from "../run/runner.ts";
import { fleetOracleHitRate, infiniteOracleHitRate } from "../workload/oracle.ts";
import type { Workload } from "../workload/workload.ts";
import { offeredRps, type ProbeRecord } from "./probe.ts";
import type { ProbePool } from "./probe-pool.ts";
import { type SearchStatus, searchCapacity } from "./search.ts";
import { formatObjective, KEEP_UP_RATIO, type Objective } from "./verdict.ts";
import { baseWorkload } from "./workload-cache.ts";

export interface CapacitySpec {
  /** The workload; `seed` and `load` are ignored (seeds come from `seeds`, rates are searched). */
  spec: BenchSpec;
  policies: readonly PolicyType[];
  seeds: readonly number[];
  objective: Objective;
  /** Search until the bracket's ratio is at most 1 + resolution. */
  resolution: number;
  maxProbes: number;
  /** Search each policy once per mode (empty: the pool's one router, no network time). */
  coordination: readonly Coordination[];
}

export interface SeedSearch {
  seed: number;
  /** Highest offered rate that passed (0 if none did). */
  capacityRps: number;
  /** Lowest rate that failed above it (null if none did). */
  failedAtRps: number | null;
  status: SearchStatus;
  /** Every probe, in the order the search made them. */
  probes: ProbeRecord[];
}

export interface AtCapacity {
  hitRate: Spread;
  /** Hit rate / the seed's fleet oracle. */
  hitRateVsFleetOracle: Spread;
  ttftMs: { p50: Spread; p90: Spread; p99: Spread };
}

export interface CapacityPolicyResult {
  policy: string;
  /** The coordination mode it was routed under; null: the pool's one router, no network time. */
  coordination: CoordinationMode | null;
  capacityRps: Spread;
  /** Mean capacity / round-robin's (same mode) mean capacity (null without a positive one). */
  vsRoundRobin: number | null;
  /** Over the seeds whose search passed somewhere (null if none did). */
  atCapacity: AtCapacity | null;
  seeds: SeedSearch[];
}

export interface CapacityResult {
  trace: string;
  profile: string;
  origins: number;
  arrivals: string;
  requests: number;
  chunkTokens: number;
  reportIntervalMs: number;
  reportDelayMs: number;
  objective: string;
  keepUpRatio: number;
  resolution: number;
  /** Per seed: the rate of `--load 1` (what the search scales) and both oracles. */
  seeds: { seed: number; loadOneRps: number; oracleHitRate: number; fleetOracleHitRate: number }[];
  results: CapacityPolicyResult[];
  /** Per policy, edge / object capacity paired by seed (empty unless both modes ran). */
  edgeRatio: EdgeCapacityRatio[];
}

export interface EdgeCapacityRatio {
  policy: string;
  /** The edge topology and sync settings the edge mode ran with. */
  edge: Omit<Coordination, "mode">;
  seeds: { seed: number; objectRps: number; edgeRps: number; ratio: number | null }[];
  /** Over seeds whose object capacity is positive. */
  ratio: RatioStats;
}

export interface CapacityHooks {
  /** One policy's search for one seed finished (`label`: the policy and its mode, if any). */
  onSearch?: (label: string, search: SeedSearch) => void;
}

const FIRST_STEP = 1.5;
/** Search bounds as multiples of the `--load 1` rate. */
const MIN_LOAD = 0.01;
const MAX_LOAD = 20;
const FIRST_LOAD = 0.5;

function atCapacityOf(searches: readonly SeedSearch[], fleetOracle: Map<number, number>) {
  const points = searches.flatMap((s) => {
    const p = s.probes.find((x) => x.offeredRps === round(s.capacityRps, 4) && x.verdict.pass);
    return p ? [{ seed: s.seed, p }] : [];
  });
  if (points.length === 0) return null;
  const ratio = (seed: number, hit: number) => {
    const oracle = fleetOracle.get(seed) ?? 0;
    return oracle > 0 ? hit / oracle : 0;
  };
  return {
    hitRate: spreadOf(points.map(({ p }) => p.hitRate)),
    hitRateVsFleetOracle: spreadOf(points.map(({ seed, p }) => ratio(seed, p.hitRate))),
    ttftMs: {
      p50: spreadOf(points.map(({ p }) => p.ttftMs.p50)),
      p90: spreadOf(points.map(({ p }) => p.ttftMs.p90)),
      p99: spreadOf(points.map(({ p }) => p.ttftMs.p99)),
    },
  };
}

/** One policy under one coordination mode (undefined: none). */
interface Variant {
  policy: PolicyType;
  coordination: Coordination | undefined;
}

/** `cost`, or `cost [edge]` under a coordination mode. */
export function labelOf(p: { policy: string; coordination: CoordinationMode | null }): string {
  return p.coordination ? `${p.policy} [${p.coordination}]` : p.policy;
}

async function searchPolicy(
  c: CapacitySpec,
  { policy, coordination }: Variant,
  loadOne: Map<number, number>,
  pool: ProbePool,
  hooks: CapacityHooks,
): Promise<SeedSearch[]> {
  const out: SeedSearch[] = [];
  for (const seed of c.seeds) {
    const spec = { ...withSeed(c.spec, seed), load: 1 };
    const unit = loadOne.get(seed) as number;
    const previous = out.at(-1);
    const resume = previous !== undefined && previous.capacityRps > 0;
    const probes = new Map<number, ProbeRecord>();
    const outcome = await searchCapacity(
      async (rateRps) => {
        const task = { spec, policy, rateRps, objective: c.objective, coordination };
        const record = await pool.run(task);
        probes.set(rateRps, record);
        return record.verdict.pass;
      },
      {
        start: resume ? previous.capacityRps : FIRST_LOAD * unit,
        step: resume ? 1 + 3 * c.resolution : FIRST_STEP,
        resolution: c.resolution,
        min: MIN_LOAD * unit,
        max: MAX_LOAD * unit,
        maxProbes: c.maxProbes,
      },
    );
    const search: SeedSearch = {
      seed,
      capacityRps: round(outcome.capacity, 4),
      failedAtRps: outcome.failedAt === null ? null : round(outcome.failedAt, 4),
      status: outcome.status,
      probes: outcome.rates.map((r) => probes.get(r) as ProbeRecord),
    };
    hooks.onSearch?.(labelOf({ policy, coordination: coordination?.mode ?? null }), search);
    out.push(search);
  }
  return out;
}

export async function runCapacity(
  c: CapacitySpec,
  pool: ProbePool,
  hooks: CapacityHooks = {},
): Promise<CapacityResult> {
  const profile = profileNamed(c.spec.profile);
  const cache = new Map<string, Workload>();
  const seeds = c.seeds.map((seed) => {
    const w = baseWorkload(cache, { ...withSeed(c.spec, seed), load: 1 });
    const chunks = c.spec.origins * Math.floor(profile.kvCapacityTokens / c.spec.chunkTokens);
    return {
      seed,
      loadOneRps: round(offeredRps(w), 4),
      oracleHitRate: round(infiniteOracleHitRate(w), 4),
      fleetOracleHitRate: round(fleetOracleHitRate(w, chunks), 4),
      requests: w.size,
    };
  });
  cache.clear();
  const loadOne = new Map(seeds.map((s) => [s.seed, s.loadOneRps]));
  const fleetOracle = new Map(seeds.map((s) => [s.seed, s.fleetOracleHitRate]));
  const modes = c.coordination.length > 0 ? c.coordination : [undefined];
  const variants: Variant[] = c.policies.flatMap((policy) =>
    modes.map((coordination) => ({ policy, coordination })),
  );
  const searches = await Promise.all(variants.map((v) => searchPolicy(c, v, loadOne, pool, hooks)));
  const capacities = searches.map((s) => spreadOf(s.map((x) => x.capacityRps)));
  const modeOf = (v: Variant) => v.coordination?.mode ?? null;
  const results = variants.map((v, i): CapacityPolicyResult => {
    const capacityRps = capacities[i] as Spread;
    const rrAt = variants.findIndex((x) => x.policy === "round-robin" && modeOf(x) === modeOf(v));
    const rr = capacities[rrAt];
    return {
      policy: v.policy,
      coordination: modeOf(v),
      capacityRps,
      vsRoundRobin: rr && rr.mean > 0 ? round(capacityRps.mean / rr.mean, 3) : null,
      atCapacity: atCapacityOf(searches[i] as SeedSearch[], fleetOracle),
      seeds: searches[i] as SeedSearch[],
    };
  });
  return {
    trace: c.spec.trace,
    profile: c.spec.profile,
    origins: c.spec.origins,
    arrivals: c.spec.arrivals,
    requests: seeds[0]?.requests ?? 0,
    chunkTokens: c.spec.chunkTokens,
    reportIntervalMs: c.spec.reportIntervalMs,
    reportDelayMs: c.spec.reportDelayMs,
    objective: formatObjective(c.objective),
    keepUpRatio: KEEP_UP_RATIO,
    resolution: c.resolution,
    seeds: seeds.map(({ requests: _, ...s }) => s),
    results,
    edgeRatio: edgeRatios(c, results),
  };
}

/** Per policy searched in both modes: each seed's edge / object capacity, then their mean. */
function edgeRatios(c: CapacitySpec, results: CapacityPolicyResult[]): EdgeCapacityRatio[] {
  const edge = c.coordination.find((x) => x.mode === "edge");
  if (!edge || !c.coordination.some((x) => x.mode === "object")) return [];
  const { mode: _, ...setup } = edge;
  return c.policies.map((policy) => {
    const of = (mode: CoordinationMode) =>
      (results.find((r) => r.policy === policy && r.coordination === mode) as CapacityPolicyResult)
        .seeds;
    const objects = of("object").map((s) => s.capacityRps);
    const edges = of("edge").map((s) => s.capacityRps);
    return {
      policy,
      edge: setup,
      seeds: c.seeds.map((seed, k) => {
        const o = objects[k] as number;
        const e = edges[k] as number;
        return { seed, objectRps: o, edgeRps: e, ratio: o > 0 ? round(e / o, 4) : null };
      }),
      ratio: ratioStats(edges, objects),
    };
  });
}
