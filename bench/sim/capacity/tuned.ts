/**
 * Baselines tuned as hard as ours: each baseline's documented knobs gridded on the tuning split
 * (`npm run bench:tune`, ../tune.ts), the chosen values committed in bench/sim/tuned.json with
 * the grid, the split and every point's capacity, and `--policies dynamo@tuned,...` running a
 * baseline at its chosen values. `cost` is never tuned per workload: its defaults are fixed.
 *
 * The grids (upstream's default always among the points):
 * - dynamo: overlap weight (`--kv-overlap-score-weight`, default 1) x router temperature
 *   (`--router-temperature`, default 0);
 * - llm-d, llm-d-precise: prefix / queue / KV-utilisation scorer weights, including 2/1/1 (our
 *   default) and 3/2/2 (llm-d's inference-scheduling guide);
 * - cache-aware (SGLang): cache threshold and the balance thresholds (absolute, relative);
 * - prefix-hash: its bounded-load factor.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { PolicyChoice } from "../../../sim/fleet/policy-choice.ts";
import type { PolicyType } from "../../../src/core/policies/index.ts";
import type { Spread } from "../report/spread.ts";

export const TUNED_PATH = fileURLToPath(new URL("../tuned.json", import.meta.url));

type Params = Record<string, number>;

const product = (a: readonly Params[], b: readonly Params[]) =>
  a.flatMap((x) => b.map((y) => ({ ...x, ...y })));
const scorers = [
  [2, 1, 1],
  [3, 2, 2],
  [1, 1, 1],
  [4, 1, 1],
  [1, 2, 2],
].map(
  ([prefixWeight, queueWeight, kvWeight]) => ({ prefixWeight, queueWeight, kvWeight }) as Params,
);

export const GRIDS: Readonly<Partial<Record<PolicyType, readonly Params[]>>> = {
  dynamo: product(
    [1, 2, 4, 8].map((overlapWeight) => ({ overlapWeight })),
    [0, 0.5].map((temperature) => ({ temperature })),
  ),
  "llm-d": scorers,
  "llm-d-precise": scorers,
  "cache-aware": [
    { cacheThreshold: 0.3, balanceAbsThreshold: 64, balanceRelThreshold: 1.5 },
    { cacheThreshold: 0.1, balanceAbsThreshold: 64, balanceRelThreshold: 1.5 },
    { cacheThreshold: 0.5, balanceAbsThreshold: 64, balanceRelThreshold: 1.5 },
    { cacheThreshold: 0.3, balanceAbsThreshold: 16, balanceRelThreshold: 1.2 },
    { cacheThreshold: 0.3, balanceAbsThreshold: 256, balanceRelThreshold: 2 },
  ],
  "prefix-hash": [1.25, 1.1, 1.5, 2].map((boundedLoad) => ({ boundedLoad })),
};

export const TUNABLE = Object.keys(GRIDS) as PolicyType[];

export interface TunedPolicy {
  /** Every grid point with its capacity on the tuning split. */
  grid: { params: Params; capacityRps: Spread }[];
  /** The point with the highest mean capacity. */
  chosen: Params;
}

export interface TunedFile {
  /** The command that wrote the file. */
  command: string;
  trace: string;
  origins: number;
  fleet: string | null;
  objective: string;
  split: "tune";
  seeds: number[];
  /** `cost` at its defaults on the same split, for reference (never tuned). */
  cost: Spread | null;
  policies: Partial<Record<PolicyType, TunedPolicy>>;
}

/** A grid point's label, e.g. `dynamo{overlapWeight=2,temperature=0}`. */
export function pointLabel(policy: PolicyType, params: Params): string {
  const text = Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return `${policy}{${text}}`;
}

export function gridChoices(policy: PolicyType): PolicyChoice[] {
  return (GRIDS[policy] ?? []).map((params) => ({
    policy,
    label: pointLabel(policy, params),
    params,
  }));
}

export function readTuned(path = TUNED_PATH): TunedFile | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as TunedFile) : null;
}

/** `policy@tuned`: its chosen parameters from the tuned file; throws a message if it has none. */
export function tunedChoice(policy: PolicyType, file = readTuned()): PolicyChoice {
  if (!GRIDS[policy]) {
    throw new Error(`${policy}@tuned: only ${TUNABLE.join(", ")} are tuned (cost never is)`);
  }
  const entry = file?.policies[policy];
  if (!entry) {
    throw new Error(`${policy}@tuned: no tuned values in ${TUNED_PATH}; run npm run bench:tune`);
  }
  return { policy, label: `${policy}@tuned`, params: entry.chosen };
}

/** The point with the highest mean capacity (the first on a tie: upstream's default leads). */
export function bestPoint(grid: TunedPolicy["grid"]): Params {
  let best = grid[0];
  for (const g of grid) if (best && g.capacityRps.mean > best.capacityRps.mean) best = g;
  if (!best) throw new Error("bestPoint: empty grid");
  return best.params;
}
