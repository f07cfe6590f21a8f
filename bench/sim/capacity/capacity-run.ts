/**
 * A capacity run: for every policy and seed, the highest offered rate at which the objective
 * holds and the fleet keeps up (`search.ts`, `verdict.ts`), with the spread over seeds and
 * the figures at each policy's capacity point, plus every probe so a reader can audit the
 * search. Each seed replays its own workload sample (`samples.ts`) and its search starts fresh,
 * from half the rate of `--load 1` with steps of 1.5, so seeds are independent measurements:
 * capacity gets a 95% interval over them, and each policy the paired ratio `cost` / it (same
 * seed, same sample) with its interval. Two ceilings frame the table (`ceilings.ts`): the
 * fleet's keep-up capacity with no objective, and the oracle's. Searches run concurrently over
 * one probe pool; every probe is a pure function of its task, so the result does not depend on
 * which finished first.
 *
 * With coordination modes (`--coordination object,edge`, sim/edge/coordination.ts) every policy
 * is searched once per mode, and with both, each seed's edge capacity over its object capacity
 * (same seed, same arrivals) gives the paired ratio with its 95% CI over seeds.
 */

import type { CoordinationMode, CoordinationSetup } from "../../../sim/edge/coordination.ts";
import { fleetChunks, formatFleet } from "../../../sim/fleet/gpu-fleet.ts";
import { READS_PREFILL_SPEED } from "../../../sim/fleet/information.ts";
import { choiceOf, type PolicyChoice } from "../../../sim/fleet/policy-choice.ts";
import type { BenchSpec } from "../../../sim/fleet/runner.ts";
import { round } from "../../../sim/report/stats.ts";
import { fleetOracleHitRate, infiniteOracleHitRate } from "../../../sim/workload/oracle.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type PolicyType, policyOf } from "../../../src/core/policies/index.ts";
import { meanInterval, type RatioStats, ratioStats } from "../edge/paired-stats.ts";
import { type Spread, spreadOf } from "../report/spread.ts";
import { type Ceilings, oracleCeilingRps } from "./ceilings.ts";
import { offeredRps, type ProbeRecord } from "./probe.ts";
import type { ProbePool } from "./probe-pool.ts";
import { type Split, sampleSpec } from "./samples.ts";
import { type SearchStatus, searchCapacity } from "./search.ts";
import { formatObjective, KEEP_UP_RATIO, NO_OBJECTIVE, type Objective } from "./verdict.ts";
import { baseWorkload } from "./workload-cache.ts";

export interface CapacitySpec {
  /** The workload; `seed` and `load` are ignored (seeds come from `seeds`, rates are searched). */
  spec: BenchSpec;
  /** Policies at their defaults, or with parameters (`dynamo@tuned`, tuned.ts). */
  policies: readonly (PolicyType | PolicyChoice)[];
  seeds: readonly number[];
  objective: Objective;
  /** The workload part seeds sample (samples.ts); null: the whole workload. */
  split?: Split | null | undefined;
  /** Also search `cost` with no objective for the keep-up ceiling (default true). */
  keepUpCeiling?: boolean | undefined;
  /** Search until the bracket's ratio is at most 1 + resolution. */
  resolution: number;
  maxProbes: number;
  /** Search each policy once per mode (empty: the pool's one router, no network time). */
  coordination: readonly CoordinationSetup[];
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

/** Mean of per-seed values with its 95% interval (Student's t over seeds). */
export type Interval = Pick<RatioStats, "mean" | "lo" | "hi">;

export interface CapacityPolicyResult {
  /** The policy's label: `cost`, `dynamo@tuned`, `cost x0.4` (prefill calibration). */
  policy: string;
  /** Every parameter it ran with, defaults included. */
  params: Record<string, unknown>;
  /** The coordination mode it was routed under; null: the pool's one router, no network time. */
  coordination: CoordinationMode | null;
  /** Over seeds, with the 95% interval of the mean. */
  capacityRps: Spread & { lo: number; hi: number };
  /**
   * Per seed `cost`'s capacity / this policy's (same mode, same sample), then their mean and
   * 95% interval; null without a `cost` row or a seed where this policy passed.
   */
  pairedRatio: Interval | null;
  /** Mean capacity / round-robin's (same mode) mean capacity (null without a positive one). */
  vsRoundRobin: number | null;
  /** Over the seeds whose search passed somewhere (null if none did). */
  atCapacity: AtCapacity | null;
  seeds: SeedSearch[];
}

export interface CapacityResult {
  trace: string;
  profile: string;
  /** A mixed fleet's `--fleet` (each origin's GPU), or null. */
  fleet: string | null;
  /** A mixed fleet's settings: one speed (`mean`) or each origin's own (`exact`); null: uniform. */
  fleetPrior: "mean" | "exact" | null;
  origins: number;
  /** The workload part the seeds sampled (samples.ts); null: the whole workload. */
  split: Split | null;
  arrivals: string;
  requests: number;
  chunkTokens: number;
  reportIntervalMs: number;
  reportDelayMs: number;
  objective: string;
  keepUpRatio: number;
  resolution: number;
  /** Per seed: its sample, the rate of `--load 1` (what the search scales) and both oracles. */
  seeds: {
    seed: number;
    window: { from: number; to: number } | null;
    requests: number;
    loadOneRps: number;
    oracleHitRate: number;
    fleetOracleHitRate: number;
  }[];
  results: CapacityPolicyResult[];
  ceilings: Ceilings;
  /** Per policy, edge / object capacity paired by seed (empty unless both modes ran). */
  edgeRatio: EdgeCapacityRatio[];
}

export interface EdgeCapacityRatio {
  policy: string;
  /** The edge topology and sync settings the edge mode ran with. */
  edge: Omit<CoordinationSetup, "mode">;
  seeds: { seed: number; objectRps: number; edgeRps: number; ratio: number | null }[];
  /** Over seeds whose object capacity is positive. */
  ratio: RatioStats;
}

export interface CapacityHooks {
  /** One policy's search for one seed finished (`label`: the policy and its mode, if any). */
  onSearch?: (label: string, search: SeedSearch) => void;
}

export const FIRST_STEP = 1.5;
/** Search bounds as multiples of the `--load 1` rate. */
const MIN_LOAD = 0.01;
const MAX_LOAD = 20;
export const FIRST_LOAD = 0.5;

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

/** One policy at one prefill calibration under one coordination mode (undefined: none). */
interface Variant {
  choice: PolicyChoice;
  prefillCalibration: number;
  coordination: CoordinationSetup | undefined;
  objective: Objective;
}

/** `cost`, `dynamo@tuned`, `cost x0.4`: the row's policy label. */
function variantLabel(v: Variant): string {
  return v.prefillCalibration === 1 ? v.choice.label : `${v.choice.label} x${v.prefillCalibration}`;
}

/** `cost`, or `cost [edge]` under a coordination mode. */
export function labelOf(p: { policy: string; coordination: CoordinationMode | null }): string {
  return p.coordination ? `${p.policy} [${p.coordination}]` : p.policy;
}

async function searchPolicy(
  c: CapacitySpec,
  v: Variant,
  samples: readonly BenchSpec[],
  loadOne: Map<number, number>,
  pool: ProbePool,
  hooks: CapacityHooks,
): Promise<SeedSearch[]> {
  const label = variantLabel(v);
  const { policy, params } = v.choice;
  // Seeds are independent: each searches its own sample from the same fresh start.
  return Promise.all(
    samples.map(async (sample): Promise<SeedSearch> => {
      const spec = { ...sample, load: 1 };
      const unit = loadOne.get(spec.seed) as number;
      const probes = new Map<number, ProbeRecord>();
      const outcome = await searchCapacity(
        async (rateRps) => {
          const record = await pool.run({
            spec,
            policy,
            params,
            prefillCalibration: v.prefillCalibration,
            rateRps,
            objective: v.objective,
            coordination: v.coordination,
          });
          probes.set(rateRps, record);
          return record.verdict.pass;
        },
        {
          start: FIRST_LOAD * unit,
          step: FIRST_STEP,
          resolution: c.resolution,
          min: MIN_LOAD * unit,
          max: MAX_LOAD * unit,
          maxProbes: c.maxProbes,
        },
      );
      const search: SeedSearch = {
        seed: spec.seed,
        capacityRps: round(outcome.capacity, 4),
        failedAtRps: outcome.failedAt === null ? null : round(outcome.failedAt, 4),
        status: outcome.status,
        probes: outcome.rates.map((r) => probes.get(r) as ProbeRecord),
      };
      hooks.onSearch?.(
        labelOf({ policy: label, coordination: v.coordination?.mode ?? null }),
        search,
      );
      return search;
    }),
  );
}

/** The variants a run searches: policies x calibrations (for policies that read it) x modes. */
function variantsOf(c: CapacitySpec): Variant[] {
  const modes = c.coordination.length > 0 ? c.coordination : [undefined];
  return c.policies.map(choiceOf).flatMap((choice) =>
    (READS_PREFILL_SPEED.has(choice.policy) ? c.spec.prefillCalibration : [1]).flatMap(
      (prefillCalibration) =>
        modes.map((coordination) => ({
          choice,
          prefillCalibration,
          coordination,
          objective: c.objective,
        })),
    ),
  );
}

/** Per seed `cost` / `mine` (seeds where `mine` passed), then the mean and its 95% interval. */
export function pairedRatio(cost: readonly number[], mine: readonly number[]): Interval | null {
  const r = ratioStats(cost, mine);
  return r.n > 0 ? { mean: r.mean, lo: r.lo, hi: r.hi } : null;
}

export async function runCapacity(
  c: CapacitySpec,
  pool: ProbePool,
  hooks: CapacityHooks = {},
): Promise<CapacityResult> {
  const split = c.split ?? null;
  const samples = c.seeds.map((_, k) => sampleSpec(c.spec, c.seeds, k, split));
  const cache = new Map<string, Workload>();
  const chunks = fleetChunks(c.spec, c.spec.chunkTokens);
  const seeds = samples.map((sample) => {
    const w = baseWorkload(cache, { ...sample, load: 1 });
    return {
      seed: sample.seed,
      window: sample.window ?? null,
      requests: w.size,
      loadOneRps: round(offeredRps(w), 4),
      oracleHitRate: round(infiniteOracleHitRate(w), 4),
      fleetOracleHitRate: round(fleetOracleHitRate(w, chunks), 4),
      oracleCeilingRps: round(oracleCeilingRps(w, sample), 4),
    };
  });
  cache.clear();
  const loadOne = new Map(seeds.map((s) => [s.seed, s.loadOneRps]));
  const fleetOracle = new Map(seeds.map((s) => [s.seed, s.fleetOracleHitRate]));
  const variants = variantsOf(c);
  const keepUp: Variant = {
    choice: choiceOf("cost"),
    prefillCalibration: 1,
    coordination: undefined,
    objective: NO_OBJECTIVE,
  };
  const searchOf = (v: Variant) => searchPolicy(c, v, samples, loadOne, pool, hooks);
  const [keepUpSearches, ...searches] = await Promise.all([
    c.keepUpCeiling === false ? Promise.resolve([]) : searchOf(keepUp),
    ...variants.map(searchOf),
  ]);
  const modeOf = (v: Variant) => v.coordination?.mode ?? null;
  const capacities = searches.map((s) => (s as SeedSearch[]).map((x) => x.capacityRps));
  const costAt = (mode: CoordinationMode | null) =>
    variants.findIndex(
      (x) => x.choice.label === "cost" && x.prefillCalibration === 1 && modeOf(x) === mode,
    );
  const results = variants.map((v, i): CapacityPolicyResult => {
    const own = capacities[i] as number[];
    const { lo, hi } = meanInterval(own);
    const capacityRps = { ...spreadOf(own), lo, hi };
    const rrAt = variants.findIndex(
      (x) => x.choice.policy === "round-robin" && modeOf(x) === modeOf(v),
    );
    const rr = rrAt >= 0 ? spreadOf(capacities[rrAt] as number[]) : undefined;
    const cost = capacities[costAt(modeOf(v))];
    return {
      policy: variantLabel(v),
      params: policyOf(v.choice.policy, v.choice.params),
      coordination: modeOf(v),
      capacityRps,
      pairedRatio: cost ? pairedRatio(cost, own) : null,
      vsRoundRobin: rr && rr.mean > 0 ? round(capacityRps.mean / rr.mean, 3) : null,
      atCapacity: atCapacityOf(searches[i] as SeedSearch[], fleetOracle),
      seeds: searches[i] as SeedSearch[],
    };
  });
  const keepUpRps = (keepUpSearches as SeedSearch[]).map((s) => s.capacityRps);
  return {
    trace: c.spec.trace,
    profile: c.spec.profile,
    fleet: c.spec.fleet ? formatFleet(c.spec.fleet) : null,
    fleetPrior: c.spec.fleet ? (c.spec.fleetPrior ?? "mean") : null,
    origins: c.spec.origins,
    split,
    arrivals: c.spec.arrivals,
    requests: seeds.reduce((a, s) => a + s.requests, 0),
    chunkTokens: c.spec.chunkTokens,
    reportIntervalMs: c.spec.reportIntervalMs,
    reportDelayMs: c.spec.reportDelayMs,
    objective: formatObjective(c.objective),
    keepUpRatio: KEEP_UP_RATIO,
    resolution: c.resolution,
    seeds: seeds.map(({ oracleCeilingRps: _, ...s }) => s),
    results,
    ceilings: {
      keepUp:
        keepUpRps.length > 0
          ? { policy: "cost", capacityRps: { ...spreadOf(keepUpRps), ...loHi(keepUpRps) } }
          : null,
      oracle: {
        capacityRps: {
          ...spreadOf(seeds.map((s) => s.oracleCeilingRps)),
          ...loHi(seeds.map((s) => s.oracleCeilingRps)),
        },
      },
    },
    edgeRatio: edgeRatios(c, results),
  };
}

function loHi(xs: readonly number[]): { lo: number; hi: number } {
  const { lo, hi } = meanInterval(xs);
  return { lo, hi };
}

/** Per policy searched in both modes: each seed's edge / object capacity, then their mean. */
function edgeRatios(c: CapacitySpec, results: CapacityPolicyResult[]): EdgeCapacityRatio[] {
  const edge = c.coordination.find((x) => x.mode === "edge");
  if (!edge || !c.coordination.some((x) => x.mode === "object")) return [];
  const { mode: _, ...setup } = edge;
  const labels = [...new Set(results.map((r) => r.policy))];
  return labels.map((policy) => {
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
