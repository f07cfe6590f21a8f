/**
 * One seed of the edge benchmark, paired: the same workload (same seed, same arrivals) replayed
 * through the synchronous router (the object decides every request, as `npm run bench` runs it) and
 * through edge coordination (I replicas, C colos, S coordinators, sim/edge/edge-front.ts), and,
 * with an outage, through both again with the coordinator (edge) or the object (object mode, its
 * fallback routing alone) unreachable for the outage. Everything a run reports is a pure function
 * of its spec and seed.
 */

import { edgePool, objectRoundTrips } from "../../../sim/edge/coordination.ts";
import { edgeFront } from "../../../sim/edge/edge-front.ts";
import type { Outage } from "../../../sim/edge/edge-world.ts";
import { objectOutageFront } from "../../../sim/edge/object-outage-front.ts";
import { assignIsolates, type Stickiness } from "../../../sim/edge/sessions.ts";
import { Topology, type TopologyOptions } from "../../../sim/edge/topology.ts";
import { type SimConfig, simulatePolicy } from "../../../sim/fleet/fleet-sim.ts";
import { informationOf } from "../../../sim/fleet/information.ts";
import { type BenchSpec, simProfiles, withSeed, workloadOf } from "../../../sim/fleet/runner.ts";
import { round } from "../../../sim/report/stats.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type PolicyType, policyOf } from "../../../src/core/policies/index.ts";
import type { EdgeSettings } from "../../../src/core/settings/edge-settings.ts";
import { type EdgeFigures, edgeFigures } from "./edge-figures.ts";
import {
  type RouteFigures,
  routeFigures,
  type Served,
  type WindowFigures,
  windowFigures,
} from "./route-figures.ts";

export interface EdgeSpec {
  bench: BenchSpec;
  policy: PolicyType;
  topology: TopologyOptions;
  stickiness: Stickiness;
  /** Overrides of the pool's `edge` settings (flush interval, records, warm time). */
  edge: Partial<EdgeSettings>;
  /** The outage's start as a share of the replay's arrival span, and its length; null: none. */
  outage: { at: number; durationMs: number } | null;
  /** Measure the bytes of every n-th sync. */
  sampleEvery: number;
  /**
   * Charge object mode its round trip: each request waits for `route` from the pool's object
   * (in the middle colo) before its origin fetch, and its TTFT counts it; edge mode decides in
   * the isolate. False: network time is zero in both, as in `npm run bench`.
   */
  objectRtt: boolean;
}

export interface RunFigures extends RouteFigures {
  throughputRps: number;
  /** Requests the router could not place, routed by the Worker's fallback. */
  fallbacks: number;
  /** Requests that never finished. */
  failed: number;
}

export interface OutageFigures {
  fromMs: number;
  toMs: number;
  /** Requests arriving during the outage, under each mode. */
  sync: WindowFigures;
  edge: WindowFigures;
  object: WindowFigures;
  /** The minute after it. */
  after: { sync: WindowFigures; edge: WindowFigures; object: WindowFigures };
  /** Requests that never finished under edge coordination through the outage. */
  edgeFailed: number;
  objectFallbacks: number;
  edgeDegradedDecisions: number;
}

export interface SeedPair {
  seed: number;
  requests: number;
  /** Pool decisions per second over the arrival span. */
  rateRps: number;
  sync: RunFigures;
  edge: RunFigures & { edge: EdgeFigures };
  outage: OutageFigures | null;
}

/** The replay's configuration for `seed`: the policy as its information model tells it. */
function configOf(spec: EdgeSpec, s: BenchSpec): SimConfig {
  return {
    policy: policyOf(spec.policy),
    origins: s.origins,
    ...simProfiles(s),
    seed: s.seed,
    information: informationOf(spec.policy, { ...s, prefillCalibration: 1 }),
  };
}

interface Replayed {
  served: Served;
  throughputRps: number;
  fallbacks: number;
  /** Requests that never finished (none should). */
  failed: number;
}

function run(w: Workload, config: SimConfig): Replayed {
  let served: Served = { requests: [], routedTo: new Int32Array(0) };
  const result = simulatePolicy(w, {
    ...config,
    observe: (r) => {
      served = r;
    },
  });
  return {
    served,
    throughputRps: result.throughputRps,
    fallbacks: Math.round(result.fallbackRate * w.size),
    failed: served.requests.filter((r) => !(r.finishMs >= r.arrivalMs)).length,
  };
}

export function runPair(spec: EdgeSpec, seed: number, workload?: Workload): SeedPair {
  const s = withSeed(spec.bench, seed);
  const w = workload ?? workloadOf(s);
  const topology = new Topology(spec.topology);
  const isolateOf = assignIsolates(w, topology, spec.stickiness, seed);
  const base = configOf(spec, s);
  const pool = edgePool(spec.edge);
  const figures = (r: Replayed): RunFigures => ({
    ...routeFigures(w, r.served, s.origins),
    throughputRps: r.throughputRps,
    fallbacks: r.fallbacks,
    failed: r.failed,
  });

  if (spec.objectRtt) base.routeDelayMs = objectRoundTrips(topology, isolateOf);
  const sync = run(w, base);
  const edge = edgeFront({ topology, isolateOf, outage: null, sampleEvery: spec.sampleEvery });
  const edged = run(w, { ...base, pool, front: edge.front, routeDelayMs: undefined });
  const span = w.size > 0 ? (w.arrivalMs[w.size - 1] as number) : 0;
  let outage: OutageFigures | null = null;
  if (spec.outage) {
    const o: Outage = {
      fromMs: Math.round(span * spec.outage.at),
      durationMs: spec.outage.durationMs,
    };
    const to = o.fromMs + o.durationMs;
    const down = edgeFront({ topology, isolateOf, outage: o, sampleEvery: spec.sampleEvery });
    const edgeDown = run(w, {
      ...base,
      pool,
      front: down.front,
      routeDelayMs: undefined,
    });
    const objectDown = run(w, { ...base, front: objectOutageFront(o) });
    const after = (r: Served) => windowFigures(r, to, to + 60_000);
    outage = {
      fromMs: o.fromMs,
      toMs: to,
      sync: windowFigures(sync.served, o.fromMs, to),
      edge: windowFigures(edgeDown.served, o.fromMs, to),
      object: windowFigures(objectDown.served, o.fromMs, to),
      after: {
        sync: after(sync.served),
        edge: after(edgeDown.served),
        object: after(objectDown.served),
      },
      edgeFailed: edgeDown.failed + edgeDown.fallbacks,
      objectFallbacks: objectDown.fallbacks,
      edgeDegradedDecisions: down.counters().degradedDecisions,
    };
  }
  return {
    seed,
    requests: w.size,
    rateRps: round(span > 0 ? (w.size * 1000) / span : 0, 2),
    sync: figures(sync),
    edge: { ...figures(edged), edge: edgeFigures(edge.counters(), edge.protocol(), w.size) },
    outage,
  };
}
