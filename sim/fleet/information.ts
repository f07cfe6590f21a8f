/**
 * The information model: what each policy's router is told in the simulator, and how late, as
 * its real system has it (bench/sim/README.md, "What each policy sees", gives the sources). A
 * baseline gets what its upstream router reads; `cost` and the other policies of this router
 * get only what this router has deployed: its own index and accounting, signed webhooks from
 * the reporter (every `--report-interval`, `--report-delay` late) and prefill speed from
 * settings (the profile's nominal speed x `--prefill-calibration`). Which is which each policy
 * declared when it registered (src/core/policies/traits.ts): this module asks its traits.
 *
 * - load reports: engine running / waiting / KV usage, every `intervalMs`, `delayMs` late.
 * - prefill rates: with this router's load reports, the engine's own prefill counters (prompt
 *   tokens over prompt seconds, differenced by the reporter, tools/reporter/reporter-state.ts),
 *   which this router's learner reads (src/core/router/speed-learner.ts); no baseline's router
 *   reads an engine's prefill counters.
 *   llm-d's gateway scrapes every 50 ms (GIE `refreshMetricsInterval`); SGLang's power-of-two
 *   polls every 5 s (`load_check_interval_secs`); cache-aware and prefix-hash read only their
 *   own request counts, and Dynamo its own active sequences, so they get none.
 * - index feed: the router's own decisions, or the engines' KV events `engineDelayMs` after
 *   the step that caused them (Dynamo, llm-d's precise scorer, as llm-d-kv-cache feeds it).
 * - first token: the router sees each request's first token (Dynamo's frontend streams the
 *   tokens, so it knows when a prefill ends); this router learns only of a request's end.
 */
import { POLICY_TYPES, type PolicyType, policyTraits } from "../../src/core/policies/index.ts";
import type { PolicyTraits } from "../../src/core/policies/traits.ts";
import type { IndexFeed } from "../../src/core/router/index-feed.ts";

export interface Information {
  /** Engine load reports, or null when the policy's router reads none. */
  readonly loadReports: { readonly intervalMs: number; readonly delayMs: number } | null;
  /** `prefill-rate` events with the load reports (this router's reporter sends them). */
  readonly prefillRates: boolean;
  readonly indexFeed: IndexFeed;
  /** Delay of the engines' KV events (with the "engine-events" feed). */
  readonly kvEventDelayMs: number;
  readonly firstToken: boolean;
  /** The settings' prefill speed is the profile's nominal speed x this. */
  readonly prefillCalibration: number;
}

/** What this router has deployed, and the delay of what baselines read from engines directly. */
export interface Deployment {
  reportIntervalMs: number;
  reportDelayMs: number;
  /** Delay of scrapes, polls and KV events (in-cluster, no signing or batching). */
  engineDelayMs: number;
  prefillCalibration: number;
}

/** llm-d (GIE) scrapes each pod's metrics this often (`refreshMetricsInterval`). */
export const SCRAPE_INTERVAL_MS = 50;
/** SGLang's gateway polls worker loads this often (CLI `load_check_interval_secs`). */
export const POLL_INTERVAL_MS = 5000;

/** Policies whose decisions read the settings' prefill speed: the calibration sweep reruns them. */
export const READS_PREFILL_SPEED: ReadonlySet<PolicyType> = new Set(
  POLICY_TYPES.filter((type) => policyTraits(type).prefillSpeed),
);

/** What `policy`'s router is told, from what the policy registered it reads (policies/traits.ts). */
export function informationOf(policy: PolicyType, d: Deployment): Information {
  const traits = policyTraits(policy);
  return {
    loadReports: loadReportsOf(traits.loadReports, d),
    // A baseline's router reads its engines itself, or not at all: never their prefill counters.
    prefillRates: traits.loadReports === "webhook",
    indexFeed: traits.kvEvents ? "engine-events" : "router",
    kvEventDelayMs: d.engineDelayMs,
    firstToken: traits.firstToken,
    prefillCalibration: d.prefillCalibration,
  };
}

function loadReportsOf(
  source: PolicyTraits["loadReports"],
  d: Deployment,
): Information["loadReports"] {
  switch (source) {
    case "webhook":
      return { intervalMs: d.reportIntervalMs, delayMs: d.reportDelayMs };
    case "scrape":
      return { intervalMs: SCRAPE_INTERVAL_MS, delayMs: d.engineDelayMs };
    case "poll":
      return { intervalMs: POLL_INTERVAL_MS, delayMs: d.engineDelayMs };
    case "none":
      return null;
    default: {
      const unknown: never = source;
      throw new Error(`no load reports from ${unknown}`);
    }
  }
}
