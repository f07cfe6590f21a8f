/**
 * Edge coordination as a replay's front (sim/fleet/routing-front.ts): I isolates' `EdgeReplica`s
 * route the requests the session model gives them (sessions.ts), S `EdgeCoordinator`s apply
 * their batches and answer, and one `EdgeRoot` merges the groups' load and takes the engines'
 * webhooks: the protocol code the Worker runs (src/core/edge), on the replay's clock.
 *
 * This module assembles the parts (edge-world.ts) and owns the routing: a request goes to its
 * isolate's replica, waits for one sync when the replica is cold or long idle (the Worker's
 * sync-loop.ts), waits for its announcement when a long prefill must (announce.ts), and goes to
 * the Worker's fallback when no replica can place it. The parts: the sync model
 * (sync-model.ts), the push model (push-model.ts: sockets, uploads, frames), the root's
 * exchanges (root-exchange.ts), what is counted (edge-counters.ts, replica-memory.ts) and
 * billed (edge-billing.ts).
 */

import type { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import { EdgeRoot } from "../../src/core/edge/edge-root.ts";
import type { RouteRequest } from "../../src/core/route-request.ts";
import { CoreRouter } from "../../src/core/router/core-router.ts";
import { fallbackPool } from "../../src/core/router/fallback-pool.ts";
import type { RouteDecision, RouterStats } from "../../src/core/router/router-types.ts";
import type { FrontEnv, FrontFactory, PoolFront } from "../fleet/routing-front.ts";
import { bump, EdgeCounters } from "./edge-counters.ts";
import { type EdgeWorld, edgeWorld, type Outage, type ReplicaHooks } from "./edge-world.ts";
import { pushModel } from "./push-model.ts";
import { measureMemory, sampleMemory } from "./replica-memory.ts";
import { startRootExchanges } from "./root-exchange.ts";
import { syncModel } from "./sync-model.ts";
import type { Topology } from "./topology.ts";

export interface EdgeFrontOptions {
  topology: Topology;
  /** Per request, the isolate that serves it (sessions.ts). */
  isolateOf: Int32Array;
  outage: Outage | null;
  /** Measure the bytes of every n-th sync (V8 serialisation costs CPU). */
  sampleEvery: number;
}

export interface EdgeRun {
  readonly front: FrontFactory;
  /** Filled in as the replay runs. */
  counters(): EdgeCounters;
  /** The protocol's own counters, summed over replicas and coordinators, after the replay. */
  protocol(): Record<string, number>;
}

export function edgeFront(options: EdgeFrontOptions): EdgeRun {
  const { topology, isolateOf, outage } = options;
  let world: EdgeWorld | null = null;
  const front: FrontFactory = (env: FrontEnv): PoolFront => {
    const c = new EdgeCounters(topology.groups, env.size);
    const w = edgeWorld(env, topology, outage, c);
    world = w;
    const { pool, model } = env;
    const { replicas, coordinators } = w;
    const root = new EdgeRoot(pool, { epoch: "root-1" });
    // The Worker's fallback, for a request no replica can place (no eligible origin).
    const fallback = new CoreRouter(fallbackPool(pool), { model, seed: env.seed });
    const tickets: (string | null)[] = new Array(env.size).fill(null);
    /** Per replica, the requests waiting for its sync (syncFirst), with their requests. */
    const held: [number, RouteRequest][][] = replicas.map(() => []);
    /** Per replica, decided requests waiting for their announcement (EdgeReplica.startAt). */
    const announcing: [number, RouteDecision][][] = replicas.map(() => []);
    const announced = new Uint8Array(env.size);
    const byFallback = new Uint8Array(env.size);
    let fallbacks = 0;
    let completed = 0;
    const done = () => completed >= env.size;
    const lastRequest: number[] = replicas.map(() => Number.NaN);

    const hooks: ReplicaHooks = {
      release: (k, t) => release(k, t),
      kick: (k, t) => {
        push?.kickUpload(k, t);
        push?.ensureSocket(k, t, false);
        sync.kickSync(k, t);
      },
    };
    const push = pool.edge.push ? pushModel(w, hooks) : null;
    const sync = syncModel(w, hooks, push, options.sampleEvery);
    startRootExchanges(w, root, done);
    sampleMemory(w, done);

    /** Route request i on replica k now (its sync, if it waited for one, has come back). */
    const decide = (i: number, k: number, request: RouteRequest, t: number): RouteDecision => {
      const r = replicas[k] as EdgeReplica;
      const age = r.viewAgeMs(t);
      if (age !== null) c.viewAgeMs[i] = age;
      if (r.degraded) c.degradedDecisions++;
      let decision = r.route(request, t);
      if (decision.origin === null) {
        fallbacks++;
        byFallback[i] = 1;
        decision = fallback.route(request, t);
      }
      tickets[i] = decision.ticket;
      push?.ensureSocket(k, t, true);
      hooks.kick(k, t);
      return decision;
    };

    /** Replica k's sync came back (answer or failure): its waiting requests are routed. */
    const release = (k: number, t: number) => {
      const pending = announcing[k] as [number, RouteDecision][];
      announcing[k] = [];
      for (const [i, d] of pending) if (startAt(k, i, d, t)) env.place(i, d, t);
      const waiting = held[k] as [number, RouteRequest][];
      if (waiting.length === 0) return;
      held[k] = [];
      for (const [i, request] of waiting) {
        const d = decide(i, k, request, t);
        if (startAt(k, i, d, t)) env.place(i, d, t);
      }
    };

    /**
     * Whether request i may start now; if not, it is placed when its replica says
     * (`EdgeReplica.startAt`: a long prefill waits for its announcement): at a known time, or
     * at a later answer (`release`).
     */
    const startAt = (k: number, i: number, d: RouteDecision, t: number): boolean => {
      const at = d.ticket ? (replicas[k] as EdgeReplica).startAt(d.ticket, t) : t;
      if (at === t) return true;
      if (!announced[i]) c.announcedDecisions++;
      announced[i] = 1;
      if (at === null) (announcing[k] as [number, RouteDecision][]).push([i, d]);
      else env.schedule(at, (when) => env.place(i, d, when));
      return false;
    };

    return {
      route(i, request, t) {
        const k = isolateOf[i] as number;
        const r = replicas[k] as EdgeReplica;
        const last = lastRequest[k] as number;
        if (!Number.isNaN(last)) c.warmSeconds += Math.min(t - last, pool.edge.warmMs) / 1000;
        lastRequest[k] = t;
        // As the Worker does: a cold or long-idle replica waits for one sync (sync-loop.ts).
        if (r.syncFirst(t)) {
          c.waitedDecisions++;
          (held[k] as [number, RouteRequest][]).push([i, request]);
          sync.fire(k, t);
          return null;
        }
        const d = decide(i, k, request, t);
        return startAt(k, i, d, t) ? d : null;
      },
      complete(i, outcome, t) {
        completed++;
        const ticket = tickets[i];
        if (ticket == null) return true;
        if (byFallback[i]) return fallback.complete(ticket, outcome, t);
        const k = isolateOf[i] as number;
        const known = (replicas[k] as EdgeReplica).complete(ticket, outcome, t);
        hooks.kick(k, t);
        return known;
      },
      firstToken(i, t) {
        const ticket = tickets[i];
        if (ticket && !byFallback[i]) {
          (replicas[isolateOf[i] as number] as EdgeReplica).router.firstToken(ticket, t);
        }
      },
      ingest(id, events, t) {
        c.webhooks++;
        bump(c.rootCallsPerSecond, t);
        root.ingest(id, events, t);
      },
      queued(t) {
        const sums: number[] = [];
        for (const coordinator of coordinators) {
          coordinator.router.loads(t).forEach(({ load }, o) => {
            sums[o] = (sums[o] ?? 0) + load.queuedPrefillTokens;
          });
        }
        return sums;
      },
      get fallbacks() {
        return fallbacks;
      },
      stats(t) {
        measureMemory(replicas, c, t);
        lastRequest.forEach((last, k) => {
          if (!Number.isNaN(last)) c.warmSeconds += Math.min(t - last, pool.edge.warmMs) / 1000;
          lastRequest[k] = Number.NaN;
        });
        // What is still waiting goes now, so the coordinators saw every decision.
        sync.drain(t);
        return merged(coordinators.map((co) => co.stats(t)));
      },
    };
  };
  return {
    front,
    counters: () => {
      if (!world) throw new Error("edge front: the replay has not run");
      return world.counters;
    },
    protocol: () => {
      const sum: Record<string, number> = {};
      const add = (o: object) => {
        for (const [key, v] of Object.entries(o)) sum[key] = (sum[key] ?? 0) + (v as number);
      };
      for (const r of world?.replicas ?? []) add(r.counters);
      for (const co of world?.coordinators ?? []) {
        add(
          Object.fromEntries(Object.entries(co.counters).map(([k, v]) => [`coordinator.${k}`, v])),
        );
      }
      return sum;
    },
  };
}

/** The coordinators' stats as one: decisions and accuracy summed over groups. */
function merged(all: RouterStats[]): RouterStats {
  const [first, ...rest] = all as [RouterStats, ...RouterStats[]];
  const byReason = { ...first.decisions.byReason };
  const accuracy = { ...first.accuracy };
  for (const s of rest) {
    for (const [reason, n] of Object.entries(s.decisions.byReason)) {
      byReason[reason] = (byReason[reason] ?? 0) + n;
    }
    accuracy.reports += s.accuracy.reports;
    accuracy.predictedTokens += s.accuracy.predictedTokens;
    accuracy.cachedTokens += s.accuracy.cachedTokens;
    accuracy.promptTokens += s.accuracy.promptTokens;
  }
  const total = all.reduce((n, s) => n + s.decisions.total, 0);
  return { ...first, decisions: { total, byReason }, accuracy };
}
