/**
 * A capacity run: for every policy and seed, the highest offered rate at which the objective
 * holds and the fleet keeps up (`search.ts`, `verdict.ts`), with the spread over seeds and
 * the figures at each policy's capacity point, plus every probe so a reader can audit the
 * search. Seed 1's search starts from half the rate of `--load 1` and steps by 1.5; each later
 * seed of a policy starts from the previous seed's capacity with a small step, which brackets
 * in two or three probes. Searches run concurrently over one probe pool; every probe is a pure
 * function of its task, so the result does not depend on which finished first.
 */
import { profileNamed } from "../../../sim/engine/profiles.ts";
import { round } from "../../../sim/report/stats.ts";
import type { PolicyType } from "../../../src/core/policies/index.ts";
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
  capacityRps: Spread;
  /** Mean capacity / round-robin's mean capacity (null without a positive round-robin). */
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
}

export interface CapacityHooks {
  /** One policy's search for one seed finished. */
  onSearch?: (policy: string, search: SeedSearch) => void;
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

async function searchPolicy(
  c: CapacitySpec,
  policy: PolicyType,
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
        const record = await pool.run({ spec, policy, rateRps, objective: c.objective });
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
    hooks.onSearch?.(policy, search);
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
  const searches = await Promise.all(
    c.policies.map((policy) => searchPolicy(c, policy, loadOne, pool, hooks)),
  );
  const capacities = searches.map((s) => spreadOf(s.map((x) => x.capacityRps)));
  const rr = capacities[c.policies.indexOf("round-robin")];
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
    results: c.policies.map((policy, i) => ({
      policy,
      capacityRps: capacities[i] as Spread,
      vsRoundRobin: rr && rr.mean > 0 ? round((capacities[i] as Spread).mean / rr.mean, 3) : null,
      atCapacity: atCapacityOf(searches[i] as SeedSearch[], fleetOracle),
      seeds: searches[i] as SeedSearch[],
    })),
  };
}
