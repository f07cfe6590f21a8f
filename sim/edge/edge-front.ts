/**
 * Edge coordination as a replay's front (sim/fleet/routing-front.ts): I isolates' `EdgeReplica`s
 * route the requests the session model gives them (sessions.ts), S `EdgeCoordinator`s apply
 * their batches and answer, and one `EdgeRoot` merges the groups' load and takes the engines'
 * webhooks: the protocol code the Worker runs (src/core/edge), on the replay's clock.
 *
 * - A replica syncs when `nextSyncAt` says (a timer in the Worker's `waitUntil`): the request
 *   reaches its group's coordinator half a round trip later (topology.ts), the answer returns
 *   after the other half. One sync per replica at a time; a sync during an outage fails after
 *   the round trip (the object is unreachable: an error, not a hang).
 * - Each coordinator exchanges with the root every `rootIntervalMs`, half a round trip each
 *   way; the engines' webhooks reach the root when the replay delivers them.
 * - Push (`edge.push`, the setting's default; push-socket.ts and coordinator-object.ts in the
 *   Worker): a warm replica with a view opens a socket to its coordinator (one connect, a round
 *   trip; the coordinator's `catchUp` comes back on it), a new one every LOOP_HANDOVER_MS while
 *   requests keep coming (a newer request's loop takes over) and none after its loop's
 *   LOOP_MAX_MS or past `warmMs`; batches go up it when `nextUploadAt` says (`upload`, half a
 *   round trip); every FRAME_TICK_MS while batches or syncs came in the last FRAME_IDLE_MS (at once at
 *   `flushRecords` records), the coordinator builds one `frame` and each open socket gets it
 *   half a round trip later (`onFrame`). A gap, a closed socket or a cold view goes to `sync`.
 *   `poll` (`edge.push` false): every warm replica syncs every `flushMs`.
 * - Outage: every coordinator is unreachable over [from, from + duration): syncs and root
 *   exchanges fail, sockets close (their replicas fall back to `sync`, which fails: degraded)
 *   and reopen after SOCKET_RETRY_MS, replicas route on their own view, records wait.
 * What it measures (EdgeCounters): calls per coordinator per second, the object requests a
 * bill counts (a sync, a connect and a root exchange one each, a message up a socket 1/20,
 * frames down free) and the isolates' warm seconds, bytes of every
 * `sampleEvery`-th sync as Workers RPC would send them (V8's wire format, counted from the value
 * so a seed replays to the byte: wire-size.ts), the view's age at each decision, replicas' memory, and the protocol's
 * counters.
 */

import { EdgeCoordinator } from "../../src/core/edge/edge-coordinator.ts";
import { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import { EdgeRoot } from "../../src/core/edge/edge-root.ts";
import { ISOLATE_ID_CHARS } from "../../src/core/edge/isolate-id.ts";
import {
  FRAME_IDLE_MS,
  FRAME_TICK_MS,
  LOOP_HANDOVER_MS,
  LOOP_MAX_MS,
  SOCKET_RETRY_MS,
} from "../../src/core/edge/push-timing.ts";
import type { PushFrame, SyncAnswer, SyncRequest } from "../../src/core/edge/sync-protocol.ts";
import type { RouteRequest } from "../../src/core/route-request.ts";
import { CoreRouter } from "../../src/core/router/core-router.ts";
import { fallbackPool } from "../../src/core/router/fallback-pool.ts";
import type { RouteDecision, RouterStats } from "../../src/core/router/router-types.ts";
import type { FrontEnv, FrontFactory, PoolFront } from "../fleet/routing-front.ts";
import type { Topology } from "./topology.ts";
import { wireSize } from "./wire-size.ts";

export interface Outage {
  fromMs: number;
  durationMs: number;
}

export interface EdgeFrontOptions {
  topology: Topology;
  /** Per request, the isolate that serves it (sessions.ts). */
  isolateOf: Int32Array;
  outage: Outage | null;
  /** Measure the bytes of every n-th sync (V8 serialisation costs CPU). */
  sampleEvery: number;
}

/** Everything the edge front counts while the replay runs. */
export class EdgeCounters {
  syncs = 0;
  failedSyncs = 0;
  rootExchanges = 0;
  webhooks = 0;
  /**
   * Per coordinator group, billed requests it received per whole second of simulated time:
   * syncs, connects, messages up sockets at MESSAGE_BILLING.
   */
  readonly callsPerSecond: Map<number, number>[];
  /** Records the coordinators applied per whole second (duplicate batches not counted). */
  readonly recordsPerSecond = new Map<number, number>();
  /** The root's calls per second: exchanges with coordinators and webhooks; exchanges alone. */
  readonly rootCallsPerSecond = new Map<number, number>();
  readonly rootExchangesPerSecond = new Map<number, number>();
  /** Sampled sync sizes in bytes: the request (batch) and the answer (delta or bootstrap). */
  readonly requestBytes: number[] = [];
  readonly answerBytes: number[] = [];
  readonly bootstrapBytes: number[] = [];
  /** Per request, the replica's view age when it decided (ms); NaN when it had no view yet. */
  readonly viewAgeMs: Float64Array;
  /** Decisions made while the replica's last sync had failed. */
  degradedDecisions = 0;
  /** Requests that waited for their replica's sync before being routed (cold or idle view). */
  waitedDecisions = 0;
  /** Requests whose start waited for their announcement (a long prefill: announce.ts). */
  announcedDecisions = 0;
  /** Push: sockets opened (connects), batches sent up sockets (incoming messages), frames. */
  connects = 0;
  uploads = 0;
  framesBuilt = 0;
  framesDelivered = 0;
  /** Syncs that reached a coordinator (a failed one reached nothing). */
  answeredSyncs = 0;
  /** Isolate-seconds warm (within `warmMs` after a request): an isolate's loop runs then. */
  warmSeconds = 0;
  /** Largest replica index (bytes, chunks) and queue seen at any sample. */
  replicaIndexBytes = 0;
  replicaIndexChunks = 0;
  replicaWaiting = 0;

  constructor(groups: number, requests: number) {
    this.callsPerSecond = Array.from({ length: groups }, () => new Map());
    this.viewAgeMs = new Float64Array(requests).fill(Number.NaN);
  }
}

/** Calls in the busiest second of a per-second count. */
export function peak(perSecond: Map<number, number>): number {
  let max = 0;
  for (const n of perSecond.values()) max = Math.max(max, n);
  return max;
}

function bump(perSecond: Map<number, number>, t: number, by = 1): void {
  const s = Math.floor(t / 1000);
  perSecond.set(s, (perSecond.get(s) ?? 0) + by);
}

/** Incoming WebSocket messages bill at 20:1 (Durable Objects pricing). */
export const MESSAGE_BILLING = 1 / 20;

/**
 * A bill's object requests (Durable Objects pricing, cited in docs/architecture.md): a sync
 * (RPC), a socket's connect and a root exchange one each, a message up a socket 1/20, a
 * message down free.
 */
export function billedRequests(c: EdgeCounters): number {
  return c.answeredSyncs + c.connects + c.uploads * MESSAGE_BILLING + c.rootExchanges;
}

/** One replica's socket: when the loop that holds it started; closed by the isolate. */
interface Socket {
  readonly loopAt: number;
  closed: boolean;
}

/** Replica memory is sampled this often (stats are O(origins), but there are many replicas). */
const MEMORY_SAMPLE_MS = 30_000;

export interface EdgeRun {
  readonly front: FrontFactory;
  /** Filled in as the replay runs. */
  counters(): EdgeCounters;
  /** The protocol's own counters, summed over replicas and coordinators, after the replay. */
  protocol(): Record<string, number>;
}

export function edgeFront(options: EdgeFrontOptions): EdgeRun {
  const { topology, isolateOf, outage } = options;
  let counters: EdgeCounters | null = null;
  let replicas: EdgeReplica[] = [];
  let coordinators: EdgeCoordinator[] = [];
  const front: FrontFactory = (env: FrontEnv): PoolFront => {
    const c = new EdgeCounters(topology.groups, env.size);
    counters = c;
    const { pool, model } = env;
    const down = (t: number) =>
      outage !== null && t >= outage.fromMs && t < outage.fromMs + outage.durationMs;
    replicas = Array.from(
      { length: topology.options.isolates },
      // As long as a Worker's ids (isolate-id.ts), so bytes up count what a Worker sends.
      (_, k) => new EdgeReplica(pool, { model, isolate: `iso${k}`.padEnd(ISOLATE_ID_CHARS, "_") }),
    );
    coordinators = Array.from(
      { length: topology.groups },
      (_, g) => new EdgeCoordinator(pool, { model, epoch: `g${g}-1`, id: `g${g}` }),
    );
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
    /** Per replica, when its sync timer fires (null: none set). */
    const timer: (number | null)[] = replicas.map(() => null);
    let syncCount = 0;

    const push = pool.edge.push;
    const oneWayOf = (k: number) =>
      topology.rttMs(
        topology.coloOf[k] as number,
        topology.coordinatorColo[topology.groupOfIsolate(k)] as number,
      ) / 2;
    /** Per replica: its open socket, the one opening, when it may try again, its upload timer. */
    const sockets: (Socket | null)[] = replicas.map(() => null);
    const opening: (Socket | null)[] = replicas.map(() => null);
    /** Per replica, the sockets its coordinator holds (accepted, not yet closed there). */
    const served: Set<Socket>[] = replicas.map(() => new Set());
    const retryAt: number[] = replicas.map(() => Number.NEGATIVE_INFINITY);
    const uploadTimer: (number | null)[] = replicas.map(() => null);
    /** Per coordinator group: its next tick, its last batch or sync, records since its frame. */
    const tickAt: (number | null)[] = coordinators.map(() => null);
    const activeAt: number[] = coordinators.map(() => Number.NEGATIVE_INFINITY);
    const sinceFrame: number[] = coordinators.map(() => 0);
    const lastRequest: number[] = replicas.map(() => Number.NaN);

    /** Batches or syncs came to group g: it ticks until FRAME_IDLE_MS after the last. */
    const active = (g: number, t: number) => {
      if (!push) return;
      activeAt[g] = t;
      if (tickAt[g] === null) tick(g, t);
    };

    const tick = (g: number, t: number) => {
      const at = t + FRAME_TICK_MS;
      tickAt[g] = at;
      env.schedule(at, (now) => {
        if (tickAt[g] === at) frame(g, now);
      });
    };

    /** Group g's tick: one frame, built once, to every socket it holds; the next tick. */
    const frame = (g: number, t: number) => {
      tickAt[g] = null;
      if (down(t)) return;
      const open: [number, Socket][] = [];
      served.forEach((held, k) => {
        if (topology.groupOfIsolate(k) === g) for (const s of held) open.push([k, s]);
      });
      if (open.length === 0) return;
      const f = (coordinators[g] as EdgeCoordinator).frame(t);
      sinceFrame[g] = 0;
      if (f) {
        c.framesBuilt++;
        for (const [k, s] of open) env.schedule(t + oneWayOf(k), (at) => deliver(k, s, f, at));
      }
      if (t - (activeAt[g] as number) < FRAME_IDLE_MS) tick(g, t);
    };

    /** Each of the isolate's open sockets hands its frames to the replica (push-socket.ts). */
    const deliver = (k: number, s: Socket, f: PushFrame, t: number) => {
      if (s.closed) return;
      c.framesDelivered++;
      const { applied, acked } = (replicas[k] as EdgeReplica).onFrame(f, t);
      if (applied || acked) release(k, t);
      kick(k, t);
    };

    /**
     * The Worker's loop opens a socket once the replica has a view (warm, not degraded), and a
     * newer request's loop opens another after LOOP_HANDOVER_MS (`handover`).
     */
    const ensureSocket = (k: number, t: number, handover: boolean) => {
      const r = replicas[k] as EdgeReplica;
      const s = sockets[k];
      if (!push || opening[k] || (s && !(handover && t - s.loopAt >= LOOP_HANDOVER_MS))) return;
      if (r.since === null || r.degraded || t < (retryAt[k] as number) || t >= r.warmUntil) return;
      const since = r.since;
      const socket: Socket = { loopAt: t, closed: false };
      opening[k] = socket;
      c.connects++;
      const g = topology.groupOfIsolate(k);
      const oneWay = oneWayOf(k);
      env.schedule(t + oneWay, (at) => {
        if (down(at)) {
          env.schedule(at + oneWay, (back) => {
            opening[k] = null;
            retryAt[k] = back + SOCKET_RETRY_MS;
            kick(k, back);
          });
          return;
        }
        bump(c.callsPerSecond[g] as Map<number, number>, at);
        const catchUp = (coordinators[g] as EdgeCoordinator).catchUp(r.isolate, since, at);
        served[k]?.add(socket);
        active(g, at);
        env.schedule(at + oneWay, (back) => {
          opening[k] = null;
          // Handover: the newer loop's socket takes over and the old one closes.
          const old = sockets[k];
          sockets[k] = socket;
          r.setPushing(true);
          if (old) closeSocket(k, old, back, false);
          if (catchUp) deliver(k, socket, catchUp, back);
          endLoop(k, socket, back);
          kick(k, back);
        });
      });
    };

    /** The loop holding `s` ends LOOP_MAX_MS after it started or when the replica goes cold. */
    const endLoop = (k: number, s: Socket, t: number) => {
      if (sockets[k] !== s) return;
      const end = Math.min(s.loopAt + LOOP_MAX_MS, (replicas[k] as EdgeReplica).warmUntil);
      // The loop ends with its socket; nothing runs until the next request or end (no kick).
      if (t >= end) closeSocket(k, s, t, false);
      else env.schedule(end, (at) => endLoop(k, s, at));
    };

    /**
     * `s` closed: its replica falls back to `sync` (nextSyncAt) until another opens; `resume`:
     * its loop runs on (an error closed it), else the loop ended with it.
     */
    const closeSocket = (k: number, s: Socket, t: number, resume: boolean) => {
      s.closed = true;
      env.schedule(t + oneWayOf(k), () => served[k]?.delete(s));
      if (sockets[k] !== s) return;
      sockets[k] = null;
      (replicas[k] as EdgeReplica).setPushing(false);
      if (resume) kick(k, t);
    };

    if (push && outage) {
      env.schedule(outage.fromMs, (t) => {
        sockets.forEach((s, k) => {
          if (!s) return;
          retryAt[k] = t + SOCKET_RETRY_MS;
          closeSocket(k, s, t, true);
        });
      });
    }

    const kickUpload = (k: number, t: number) => {
      const r = replicas[k] as EdgeReplica;
      if (!sockets[k]) return;
      const next = r.nextUploadAt(t);
      if (next === null) return;
      const at = Math.max(next, t);
      const set = uploadTimer[k];
      if (set !== null && set !== undefined && set <= at) return;
      uploadTimer[k] = at;
      env.schedule(at, (now) => {
        if (uploadTimer[k] !== at) return;
        uploadTimer[k] = null;
        upload(k, now);
      });
    };

    /** A batch up replica k's socket, applied by its coordinator half a round trip later. */
    const upload = (k: number, t: number) => {
      const r = replicas[k] as EdgeReplica;
      const s = sockets[k];
      if (!s) return;
      const batch = r.startUpload(t);
      if (batch) {
        c.uploads++;
        const g = topology.groupOfIsolate(k);
        env.schedule(t + oneWayOf(k), (at) => {
          // Lost with a closed socket or an unreachable object: sent again unacknowledged.
          if (down(at) || !served[k]?.has(s)) return;
          bump(c.callsPerSecond[g] as Map<number, number>, at, MESSAGE_BILLING);
          if ((coordinators[g] as EdgeCoordinator).upload(r.isolate, batch, at) === "applied") {
            bump(c.recordsPerSecond, at, batch.records.length);
          }
          sinceFrame[g] = (sinceFrame[g] as number) + batch.records.length;
          active(g, at);
          if ((sinceFrame[g] as number) >= pool.edge.flushRecords) frame(g, at);
        });
      }
      kickUpload(k, t);
    };

    const kick = (k: number, t: number) => {
      kickUpload(k, t);
      ensureSocket(k, t, false);
      kickSync(k, t);
    };

    const kickSync = (k: number, t: number) => {
      const r = replicas[k] as EdgeReplica;
      const next = r.nextSyncAt(t);
      if (next === null) return;
      const at = Math.max(next, t);
      const set = timer[k];
      if (set !== null && set !== undefined && set <= at) return;
      timer[k] = at;
      env.schedule(at, (now) => {
        if (timer[k] !== at) return; // superseded by an earlier timer
        timer[k] = null;
        // The Worker's loop awaits its socket's opening: no sync meanwhile (it kicks after).
        if (opening[k]) return;
        fire(k, now);
      });
    };

    const fire = (k: number, t: number) => {
      const r = replicas[k] as EdgeReplica;
      const next = r.nextSyncAt(t);
      if (next === null) return;
      if (next > t) return kickSync(k, t);
      const request = r.startSync(t);
      if (!request) return;
      const g = topology.groupOfIsolate(k);
      const oneWay =
        topology.rttMs(topology.coloOf[k] as number, topology.coordinatorColo[g] as number) / 2;
      c.syncs++;
      const sample = syncCount++ % options.sampleEvery === 0;
      env.schedule(t + oneWay, (at) => {
        if (down(at)) {
          env.schedule(at + oneWay, (back) => {
            c.failedSyncs++;
            r.onFailure(back);
            release(k, back);
            kick(k, back);
          });
          return;
        }
        bump(c.callsPerSecond[g] as Map<number, number>, at);
        c.answeredSyncs++;
        const answer = (coordinators[g] as EdgeCoordinator).sync(request, at);
        active(g, at);
        if (request.batch && !answer.duplicate) {
          bump(c.recordsPerSecond, at, request.batch.records.length);
        }
        if (sample) measure(request, answer);
        env.schedule(at + oneWay, (back) => {
          r.onAnswer(answer, back);
          release(k, back);
          kick(k, back);
        });
      });
    };

    const measure = (request: SyncRequest, answer: SyncAnswer) => {
      c.requestBytes.push(wireSize(request));
      c.answerBytes.push(wireSize(answer));
      if (answer.bootstrap) c.bootstrapBytes.push(answer.bootstrap.length);
    };

    const exchange = (g: number, t: number) => {
      if (completed >= env.size) return;
      env.schedule(t + pool.edge.rootIntervalMs, (next) => exchange(g, next));
      if (down(t)) return;
      const coordinator = coordinators[g] as EdgeCoordinator;
      const oneWay = topology.rttMs(topology.coordinatorColo[g] as number, topology.rootColo) / 2;
      const report = coordinator.rootReport(t);
      env.schedule(t + oneWay, (at) => {
        c.rootExchanges++;
        bump(c.rootCallsPerSecond, at);
        bump(c.rootExchangesPerSecond, at);
        const answer = root.exchange(report, at);
        env.schedule(at + oneWay, (back) => {
          if (!down(back)) coordinator.onRootAnswer(answer, back);
        });
      });
    };
    for (let g = 0; g < coordinators.length; g++) exchange(g, 0);

    const measureMemory = (t: number) => {
      for (const r of replicas) {
        const { index } = r.stats(t);
        c.replicaIndexBytes = Math.max(c.replicaIndexBytes, index.bytes);
        c.replicaIndexChunks = Math.max(c.replicaIndexChunks, index.chunks);
        c.replicaWaiting = Math.max(c.replicaWaiting, r.waiting.records);
      }
    };
    const sampleMemory = (t: number) => {
      if (completed >= env.size) return;
      measureMemory(t);
      env.schedule(t + MEMORY_SAMPLE_MS, sampleMemory);
    };
    env.schedule(MEMORY_SAMPLE_MS, sampleMemory);

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
      ensureSocket(k, t, true);
      kick(k, t);
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
          fire(k, t);
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
        kick(k, t);
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
        measureMemory(t);
        lastRequest.forEach((last, k) => {
          if (!Number.isNaN(last)) c.warmSeconds += Math.min(t - last, pool.edge.warmMs) / 1000;
          lastRequest[k] = Number.NaN;
        });
        // What is still waiting goes now, so the coordinators saw every decision.
        replicas.forEach((r, k) => {
          const coordinator = coordinators[topology.groupOfIsolate(k)] as EdgeCoordinator;
          for (let request = r.startSync(t); request; request = r.startSync(t)) {
            r.onAnswer(coordinator.sync(request, t), t);
            if (r.waiting.records === 0) break;
          }
        });
        return merged(coordinators.map((co) => co.stats(t)));
      },
    };
  };
  return {
    front,
    counters: () => {
      if (!counters) throw new Error("edge front: the replay has not run");
      return counters;
    },
    protocol: () => {
      const sum: Record<string, number> = {};
      const add = (o: object) => {
        for (const [key, v] of Object.entries(o)) sum[key] = (sum[key] ?? 0) + (v as number);
      };
      for (const r of replicas) add(r.counters);
      for (const co of coordinators) {
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
