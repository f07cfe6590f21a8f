/**
 * Mixed GPU fleets (`--fleet h100:2,a100:4,l40s:2`): which engine profile each origin runs, and
 * the one profile the router and the workload's load scale are given. A user who did not
 * measure their GPUs configures one pool-wide prefill speed, so every origin's settings get
 * the same prior: the fleet's mean nominal speed (x `--prefill-calibration`), right on average
 * and wrong for every GPU kind. `--load 1` still means the fleet's summed prefill speed.
 */
import { type EngineProfile, profileNamed } from "../engine/profiles.ts";

/** `--fleet`'s GPU kinds: each runs Llama-3.1-8B (sim/engine/profiles.ts). */
export const GPU_KINDS: Readonly<Record<string, string>> = {
  h100: "llama-3.1-8b-h100",
  h200: "llama-3.1-8b-h200",
  a100: "llama-3.1-8b-a100",
  l40s: "llama-3.1-8b-l40s",
};

export interface FleetPart {
  gpu: string;
  count: number;
}

/** `h100:2,a100:4`; throws a message naming the flag's form. */
export function parseFleet(text: string): FleetPart[] {
  const parts = text.split(",").map((item) => {
    const m = /^([a-z0-9]+):(\d+)$/.exec(item.trim());
    const count = Number(m?.[2]);
    if (!m || !GPU_KINDS[m[1] as string] || !(count >= 1 && count <= 256)) {
      throw new Error(
        `--fleet must be KIND:COUNT,... with KIND one of ${Object.keys(GPU_KINDS).join(", ")} ` +
          `and COUNT 1..256, got "${text}"`,
      );
    }
    return { gpu: m[1] as string, count };
  });
  if (new Set(parts.map((p) => p.gpu)).size !== parts.length) {
    throw new Error(`--fleet lists a GPU kind twice: "${text}"`);
  }
  return parts;
}

export function formatFleet(parts: readonly FleetPart[]): string {
  return parts.map((p) => `${p.gpu}:${p.count}`).join(",");
}

/** What a replay's fleet is: `origins` of `profile`, or the parts of a mixed fleet. */
export interface FleetOf {
  profile: string;
  origins: number;
  fleet?: readonly FleetPart[] | null | undefined;
}

/** Each origin's engine profile, in origin order (a mixed fleet's parts in the order given). */
export function originProfiles(s: FleetOf): EngineProfile[] {
  if (!s.fleet) return Array.from({ length: s.origins }, () => profileNamed(s.profile));
  return s.fleet.flatMap((p) =>
    Array.from({ length: p.count }, () => profileNamed(GPU_KINDS[p.gpu] as string)),
  );
}

/**
 * The profile the router is told about and the load scale uses: `--profile` for a uniform fleet;
 * for a mixed one the first kind's with the fleet's mean prefill speed and KV capacity.
 */
export function nominalProfile(s: FleetOf): EngineProfile {
  const all = originProfiles(s);
  const first = all[0] as EngineProfile;
  if (!s.fleet) return first;
  const mean = (f: (p: EngineProfile) => number) =>
    all.reduce((a, p) => a + f(p), 0) / Math.max(1, all.length);
  return {
    ...first,
    name: `fleet ${formatFleet(s.fleet)}`,
    source: all.map((p) => p.source).join("; "),
    prefillTokensPerSecond: Math.round(mean((p) => p.prefillTokensPerSecond)),
    kvCapacityTokens: Math.floor(mean((p) => p.kvCapacityTokens)),
  };
}

/** The fleet's KV cache in chunks (what the fleet oracle may hold). */
export function fleetChunks(s: FleetOf, chunkTokens: number): number {
  return originProfiles(s).reduce((a, p) => a + Math.floor(p.kvCapacityTokens / chunkTokens), 0);
}
