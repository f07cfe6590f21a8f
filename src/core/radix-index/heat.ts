/**
 * Node heat: how many requests went through a prefix lately, as an exponentially decayed count
 * (half-life `halfLifeMs` of the caller's clock). Every insert warms each node on its path, so
 * an ancestor is always at least as hot as its descendants and the hot part of a path is a
 * prefix of it. A prefix many requests share (a system prompt, a popular document) runs hot; a
 * private conversation warms its own nodes once per turn and stays cool. The cost policy
 * replicates a hot prefix freely and charges for splitting a cool one (docs/architecture.md,
 * "Policies": the hot part of a match is not priced). Heat is not kept in snapshots: it
 * rebuilds in a half-life.
 */
import type { RadixStore } from "./store.ts";

/**
 * Default half-life of every request-heat figure in the core: node heat here and the hottest
 * prefixes (`router/hot-prefixes.ts`), so "hot" means the same recent traffic in both.
 */
export const HEAT_HALF_LIFE_MS = 60_000;

/** The node's heat decayed to `now` (a clock running backwards does not warm it). */
export function heatOf(s: RadixStore, node: number, now: number, halfLifeMs: number): number {
  const elapsed = Math.max(0, now - s.nodeHeatAt[node]!);
  return s.nodeHeat[node]! * 2 ** (-elapsed / halfLifeMs);
}

/** One more request through `node` at `now`. */
export function warm(s: RadixStore, node: number, now: number, halfLifeMs: number): void {
  s.nodeHeat[node] = heatOf(s, node, now, halfLifeMs) + 1;
  s.nodeHeatAt[node] = Math.max(now, s.nodeHeatAt[node]!);
}
