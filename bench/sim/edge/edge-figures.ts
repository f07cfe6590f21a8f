/**
 * Edge coordination's own figures from what the edge front counted (sim/edge/edge-counters.ts): calls
 * per request, the busiest second of a coordinator and of the root, bytes per sync as Workers RPC
 * would carry them, the object requests a bill counts, the view's age at decision time, replica memory and the protocol's counters.
 */

import { billedRequests } from "../../../sim/edge/edge-billing.ts";
import { type EdgeCounters, peak } from "../../../sim/edge/edge-counters.ts";
import { quantile, round } from "../../../sim/report/stats.ts";

export interface EdgeFigures {
  /** Billed coordinator and root requests (syncs, connects, uploads at 1/20, exchanges) per request; webhooks not counted (both modes make them). */
  callsPerRequest: number;
  syncsPerRequest: number;
  /**
   * Billed object requests (`billedRequests`) per warm isolate-second (`callsPerRequest` is per
   * LLM request; object mode pays 2), and what push sent.
   */
  bill: {
    perWarmIsolateSecond: number;
    connects: number;
    uploads: number;
    framesBuilt: number;
    framesDelivered: number;
  };
  /** Busiest second of the busiest coordinator, and of the root (exchanges and webhooks). */
  peakSyncsPerSecond: number;
  peakRootCallsPerSecond: number;
  requestBytes: { mean: number; p99: number };
  answerBytes: { mean: number; p99: number };
  bootstraps: { count: number; meanBytes: number };
  viewAgeMs: { p50: number; p99: number; max: number };
  /** Decisions made with no view yet (a cold replica) and while degraded. */
  coldDecisions: number;
  /** Requests that waited for one sync before being routed (cold or idle replica: syncFirst). */
  waitedDecisions: number;
  /** Requests whose start waited for their announcement (a long prefill). */
  announcedDecisions: number;
  degradedDecisions: number;
  replica: { indexBytes: number; indexChunks: number; waitingRecords: number };
  protocol: Record<string, number>;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function sizes(xs: readonly number[]): { mean: number; p99: number } {
  const sorted = Float64Array.from(xs).sort();
  return { mean: Math.round(mean(xs)), p99: quantile(sorted, 0.99) };
}

export function edgeFigures(
  c: EdgeCounters,
  protocol: Record<string, number>,
  requests: number,
): EdgeFigures {
  const ages = Float64Array.from(c.viewAgeMs.filter((a) => !Number.isNaN(a))).sort();
  return {
    callsPerRequest: round(billedRequests(c) / Math.max(1, requests), 4),
    syncsPerRequest: round(c.syncs / Math.max(1, requests), 4),
    bill: {
      perWarmIsolateSecond: round(billedRequests(c) / Math.max(1, c.warmSeconds), 4),
      connects: c.connects,
      uploads: c.uploads,
      framesBuilt: c.framesBuilt,
      framesDelivered: c.framesDelivered,
    },
    peakSyncsPerSecond: round(Math.max(0, ...c.callsPerSecond.map(peak)), 2),
    peakRootCallsPerSecond: peak(c.rootCallsPerSecond),
    requestBytes: sizes(c.requestBytes),
    answerBytes: sizes(c.answerBytes),
    bootstraps: {
      count: protocol["coordinator.bootstraps"] ?? 0,
      meanBytes: Math.round(mean(c.bootstrapBytes)),
    },
    viewAgeMs: {
      p50: round(quantile(ages, 0.5), 1),
      p99: round(quantile(ages, 0.99), 1),
      max: round(quantile(ages, 1), 1),
    },
    coldDecisions: requests - ages.length,
    waitedDecisions: c.waitedDecisions,
    announcedDecisions: c.announcedDecisions,
    degradedDecisions: c.degradedDecisions,
    replica: {
      indexBytes: c.replicaIndexBytes,
      indexChunks: c.replicaIndexChunks,
      waitingRecords: c.replicaWaiting,
    },
    protocol,
  };
}
