/** One fixed colour per policy (Tableau 10, then Tableau 20), so every chart of every report agrees. */
import { POLICY_TYPES } from "../../../src/core/policies/index.ts";

const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
  "#86bcb6",
];

export function colorOf(policy: string): string {
  const i = (POLICY_TYPES as readonly string[]).indexOf(policy);
  return PALETTE[(i < 0 ? POLICY_TYPES.length : i) % PALETTE.length] as string;
}

/** Colour of the k-th series in a chart of unnamed series (e.g. origins). */
export function colorAt(k: number): string {
  return PALETTE[k % PALETTE.length] as string;
}
