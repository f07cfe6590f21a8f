/**
 * The edge front's sync model (the Worker's sync-loop.ts), on the replay's clock: a replica
 * syncs when `nextSyncAt` says (a timer in the Worker's `waitUntil`); the request reaches its
 * group's coordinator half a round trip later (topology.ts), the answer returns after the other
 * half. One sync per replica at a time, none while its loop awaits a socket's opening
 * (push-model.ts). With push on, a replica syncs only when cold, after a gap or without a
 * socket; with `edge.push` false (`poll`), every warm replica syncs every `flushMs`. During an
 * outage a sync fails after the round trip (the object is unreachable: an error, not a hang) and
 * the replica routes on its own view (degraded). A sync is one billed object request; the bytes
 * of every `sampleEvery`-th one are measured (wire-size.ts).
 */
import type { EdgeCoordinator } from "../../src/core/edge/edge-coordinator.ts";
import type { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import type { SyncAnswer, SyncRequest } from "../../src/core/edge/sync-protocol.ts";
import { bump } from "./edge-counters.ts";
import type { EdgeWorld, ReplicaHooks } from "./edge-world.ts";
import type { PushModel } from "./push-model.ts";
import { wireSize } from "./wire-size.ts";

export interface SyncModel {
  /** Replica k's sync timer, set to when `nextSyncAt` says. */
  kickSync(k: number, t: number): void;
  /** Replica k syncs now if it is due (a request waiting for its view calls it at once). */
  fire(k: number, t: number): void;
  /** At the replay's end: every replica sends what still waits, answered at once. */
  drain(t: number): void;
}

/** `push`: the push model (null with `edge.push` false); `sampleEvery`: measure every n-th sync. */
export function syncModel(
  world: EdgeWorld,
  hooks: ReplicaHooks,
  push: PushModel | null,
  sampleEvery: number,
): SyncModel {
  const { env, topology, replicas, coordinators, counters: c, down, oneWayOf } = world;
  const { release, kick } = hooks;
  /** Per replica, when its sync timer fires (null: none set). */
  const timer: (number | null)[] = replicas.map(() => null);
  let syncCount = 0;

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
      if (push?.opening(k)) return;
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
    const oneWay = oneWayOf(k);
    c.syncs++;
    const sample = syncCount++ % sampleEvery === 0;
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
      push?.active(g, at);
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

  const drain = (t: number) => {
    replicas.forEach((r, k) => {
      const coordinator = coordinators[topology.groupOfIsolate(k)] as EdgeCoordinator;
      for (let request = r.startSync(t); request; request = r.startSync(t)) {
        r.onAnswer(coordinator.sync(request, t), t);
        if (r.waiting.records === 0) break;
      }
    });
  };

  return { kickSync, fire, drain };
}
