/**
 * What the edge front's parts share while a replay runs (edge-front.ts builds it): the replay's
 * environment, the topology and its delays, the protocol's objects the Worker runs
 * (src/core/edge: one `EdgeReplica` per isolate, one `EdgeCoordinator` per group), the counters,
 * the outage's clock, and the two calls the sync and push models make back into the front when a
 * replica's state moves.
 */
import { EdgeCoordinator } from "../../src/core/edge/edge-coordinator.ts";
import { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import { ISOLATE_ID_CHARS } from "../../src/core/edge/isolate-id.ts";
import type { FrontEnv } from "../fleet/routing-front.ts";
import type { EdgeCounters } from "./edge-counters.ts";
import type { Topology } from "./topology.ts";

/** Every coordinator is unreachable over [fromMs, fromMs + durationMs). */
export interface Outage {
  fromMs: number;
  durationMs: number;
}

export interface EdgeWorld {
  readonly env: FrontEnv;
  readonly topology: Topology;
  readonly outage: Outage | null;
  readonly replicas: readonly EdgeReplica[];
  readonly coordinators: readonly EdgeCoordinator[];
  readonly counters: EdgeCounters;
  /** Whether the coordinators (and the root's exchanges) are unreachable at `t`. */
  down(t: number): boolean;
  /** Half the round trip between isolate k and its group's coordinator. */
  oneWayOf(k: number): number;
}

/** The front's calls for replica k at t, made when a sync, a frame or a socket moved it. */
export interface ReplicaHooks {
  /** Its view moved (or its sync failed): the requests waiting for it are routed. */
  release(k: number, t: number): void;
  /** Its timers are set again: upload, socket, sync. */
  kick(k: number, t: number): void;
}

/** One replica per isolate, one coordinator per group, for this replay's pool. */
export function edgeWorld(
  env: FrontEnv,
  topology: Topology,
  outage: Outage | null,
  counters: EdgeCounters,
): EdgeWorld {
  const { pool, model } = env;
  const replicas = Array.from(
    { length: topology.options.isolates },
    // As long as a Worker's ids (isolate-id.ts), so bytes up count what a Worker sends.
    (_, k) => new EdgeReplica(pool, { model, isolate: `iso${k}`.padEnd(ISOLATE_ID_CHARS, "_") }),
  );
  const coordinators = Array.from(
    { length: topology.groups },
    (_, g) => new EdgeCoordinator(pool, { model, epoch: `g${g}-1`, id: `g${g}` }),
  );
  return {
    env,
    topology,
    outage,
    replicas,
    coordinators,
    counters,
    down: (t) => outage !== null && t >= outage.fromMs && t < outage.fromMs + outage.durationMs,
    oneWayOf: (k) =>
      topology.rttMs(
        topology.coloOf[k] as number,
        topology.coordinatorColo[topology.groupOfIsolate(k)] as number,
      ) / 2,
  };
}
