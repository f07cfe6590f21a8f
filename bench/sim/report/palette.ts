/** One fixed colour per policy (Tableau 10), so every chart of every report agrees. */
import { POLICY_TYPES } from "../../../src/core/policies/index.ts";

const TABLEAU_10 = [
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
];

export function colorOf(policy: string): string {
  const i = (POLICY_TYPES as readonly string[]).indexOf(policy);
  return TABLEAU_10[(i < 0 ? POLICY_TYPES.length : i) % TABLEAU_10.length] as string;
}

/** Colour of the k-th series in a chart of unnamed series (e.g. origins). */
export function colorAt(k: number): string {
  return TABLEAU_10[k % TABLEAU_10.length] as string;
}
