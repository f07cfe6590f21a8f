/**
 * The edge front's push model (`edge.push`, the setting's default; push-socket.ts and
 * coordinator-object.ts in the Worker), on the replay's clock:
 * - Sockets: a warm replica with a view opens a socket to its coordinator (one connect, a round
 *   trip; the coordinator's `catchUp` comes back on it), a new one every LOOP_HANDOVER_MS while
 *   requests keep coming (a newer request's loop takes over) and none after its loop's
 *   LOOP_MAX_MS or past `warmMs`. A closed socket sends its replica back to `sync`
 *   (sync-model.ts) until another opens.
 * - Uploads: batches go up the socket when `nextUploadAt` says (`upload`, half a round trip).
 * - Frames: every FRAME_TICK_MS while batches or syncs came in the last FRAME_IDLE_MS (at once
 *   at `flushRecords` records), the coordinator builds one `frame` and each open socket gets it
 *   half a round trip later (`onFrame`); a gap or a cold view goes to `sync`.
 * - Outage: sockets close at its start (their replicas fall back to `sync`, which fails:
 *   degraded) and reopen SOCKET_RETRY_MS later; uploads meanwhile are lost and sent again.
 * Billing: a connect counts one object request, a message up MESSAGE_BILLING, frames down free.
 */
import type { EdgeCoordinator } from "../../src/core/edge/edge-coordinator.ts";
import type { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import {
  FRAME_IDLE_MS,
  FRAME_TICK_MS,
  LOOP_HANDOVER_MS,
  LOOP_MAX_MS,
  SOCKET_RETRY_MS,
} from "../../src/core/edge/push-timing.ts";
import type { PushFrame } from "../../src/core/edge/sync-protocol.ts";
import { MESSAGE_BILLING } from "./edge-billing.ts";
import { bump } from "./edge-counters.ts";
import type { EdgeWorld, ReplicaHooks } from "./edge-world.ts";

export interface PushModel {
  /** Batches or syncs came to group g at t: it ticks until FRAME_IDLE_MS after the last. */
  active(g: number, t: number): void;
  /**
   * Replica k's loop opens a socket if it may (a view, warm, not degraded, none open);
   * `handover`: a newer request's loop, which replaces one open LOOP_HANDOVER_MS or longer.
   */
  ensureSocket(k: number, t: number, handover: boolean): void;
  /** Replica k's upload timer, set to when its socket's next batch is due. */
  kickUpload(k: number, t: number): void;
  /** Whether replica k's loop is awaiting its socket's opening (it syncs only after). */
  opening(k: number): boolean;
}

/** One replica's socket: when the loop that holds it started; closed by the isolate. */
interface Socket {
  readonly loopAt: number;
  closed: boolean;
}

export function pushModel(world: EdgeWorld, hooks: ReplicaHooks): PushModel {
  const { env, topology, replicas, coordinators, counters: c, down, oneWayOf, outage } = world;
  const { pool } = env;
  const { release, kick } = hooks;
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

  const active = (g: number, t: number) => {
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
    if (opening[k] || (s && !(handover && t - s.loopAt >= LOOP_HANDOVER_MS))) return;
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

  if (outage) {
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

  return { active, ensureSocket, kickUpload, opening: (k) => opening[k] !== null };
}
