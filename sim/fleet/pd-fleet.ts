/**
 * A simulated fleet's prefill/decode layout: which origins prefill and which decode (the first
 * `prefill` origins prefill, the rest decode), and the pool's disaggregation rule for a mode of
 * the benchmark's `--disaggregation` switch:
 * - `conditional`: the pool's defaults (docs/api.md), or the overrides given;
 * - `always`: every request is prefilled remotely, however short or cached, and whatever the
 *   prefill queues (minUncachedTokens 0, no busy bypass);
 * - `never`: every request is prefilled on its decode origin; the prefill origins idle.
 * Prefill origins speak vllm-nixl, so `conditional` may let them serve whole requests
 * (`prefillServesWhole`, `--prefill-serves-whole`; router/disaggregation.ts).
 */
import type { DisaggregationSettings } from "../../src/core/settings/pd-settings.ts";
import type { OriginSettings } from "../../src/core/settings/settings-schema.ts";

export const DISAGGREGATION_MODES = ["conditional", "always", "never"] as const;
export type DisaggregationMode = (typeof DISAGGREGATION_MODES)[number];

export interface PdFleet {
  prefill: number;
  decode: number;
  mode: DisaggregationMode;
  /** Overrides of the conditional rule's fields (`conditional` only). */
  rule?: Partial<DisaggregationSettings> | undefined;
}

export function disaggregationRule(fleet: PdFleet): Partial<DisaggregationSettings> {
  switch (fleet.mode) {
    case "conditional":
      return fleet.rule ?? {};
    case "always":
      return { minUncachedTokens: 0, maxUncachedFraction: 1, prefillBusyMs: 3_600_000 };
    case "never":
      return { minUncachedTokens: 1e9, maxUncachedFraction: 1 };
    default: {
      const unknown: never = fleet.mode;
      throw new Error(`unknown disaggregation mode ${String(unknown)}`);
    }
  }
}

/** Origin `i`'s role and P/D settings in the fleet (aggregated when `fleet` is null). */
export function pdRole(
  fleet: PdFleet | null,
  i: number,
): Pick<OriginSettings, "role" | "pd"> | Record<string, never> {
  if (!fleet) return {};
  return { role: i < fleet.prefill ? "prefill" : "decode", pd: { protocol: "vllm-nixl" } };
}
