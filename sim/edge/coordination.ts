/**
 * Who routes a replay under each coordination mode, over one topology: `object`, the pool's one
 * router (the Durable Object's) reached after the round trip from the request's isolate's colo
 * to the object, which the request's TTFT counts, as the Worker waits for `route`; `edge`, I
 * isolates' replicas syncing with S coordinators (edge-front.ts), deciding in the isolate. The
 * same setup `npm run bench:edge` pairs (edge-pair.ts), as plain data so a capacity probe can
 * carry it to a worker thread (`npm run bench:capacity -- --coordination object,edge`).
 */

import type { EdgeSettings } from "../../src/core/settings/edge-settings.ts";
import type { SimConfig } from "../fleet/fleet-sim.ts";
import type { Workload } from "../workload/workload.ts";
import { edgeFront } from "./edge-front.ts";
import { assignIsolates, type Stickiness } from "./sessions.ts";
import { Topology, type TopologyOptions } from "./topology.ts";

export const COORDINATION_MODES = ["object", "edge"] as const;
export type CoordinationMode = (typeof COORDINATION_MODES)[number];

/** One mode as a replay runs it: the mode, the topology, users' stickiness, edge overrides. */
export interface CoordinationSetup {
  mode: CoordinationMode;
  topology: TopologyOptions;
  stickiness: Stickiness;
  /** Overrides of the pool's `edge` settings (flush interval, records, warm time). */
  edge: Partial<EdgeSettings>;
}

/** bench:edge's defaults: I = 32, C = 4, S = 1, users in their home colo 90% of the time. */
export const EDGE_TOPOLOGY: TopologyOptions = {
  isolates: 32,
  colos: 4,
  coordinators: 1,
  rttNearMs: 2,
  rttFarMs: 150,
};
export const EDGE_STICKINESS: Stickiness = { colo: 0.9, isolate: 0 };

/** Per request, the round trip from its isolate's colo to the pool's object (object mode). */
export function objectRoundTrips(topology: Topology, isolateOf: Int32Array): Float64Array {
  const rtt = (k: number) => topology.rttMs(topology.coloOf[k] as number, topology.rootColo);
  return Float64Array.from(isolateOf, rtt);
}

/** The pool settings that put a replay's pool in edge mode with `edge`'s overrides. */
export function edgePool(edge: Partial<EdgeSettings>): SimConfig["pool"] {
  return { coordination: "edge", edge };
}

/** Syncs' bytes are not a capacity figure: count almost none (counting costs CPU). */
const NO_BYTES = 2 ** 30;

/** How a replay of `w` is routed under `c` (its users' isolates seeded by `seed`). */
export function routingOf(
  w: Workload,
  c: CoordinationSetup,
  seed: number,
): Pick<SimConfig, "front" | "pool" | "routeDelayMs"> {
  const topology = new Topology(c.topology);
  const isolateOf = assignIsolates(w, topology, c.stickiness, seed);
  if (c.mode === "object") return { routeDelayMs: objectRoundTrips(topology, isolateOf) };
  const { front } = edgeFront({ topology, isolateOf, outage: null, sampleEvery: NO_BYTES });
  return { front, pool: edgePool(c.edge) };
}
