/**
 * @module
 * This isolate's replicas of its edge-coordinated pools (docs/architecture.md, "The Worker's
 * edge path"): one `EdgeReplica` per pool, made at the pool's first request, its index capped
 * at the pool's `edge.replicaMaxChunks` (the core's `replicaPool`), brought up to new settings
 * when their fingerprint changes. Beside each: its admission (edge-admission.ts), the reports
 * waiting to ride with its syncs, and the state of its sync loop (sync-loop.ts).
 *
 * The registry is module scope (`replicaRegistry`): an isolate's memory outlives its requests,
 * which is what lets it route without a call. Tests make several registries to stand for
 * several isolates syncing with one coordinator.
 */
import { EdgeReplica } from "../../../core/edge/edge-replica.ts";
import { ISOLATE_ID_BYTES, isolateId } from "../../../core/edge/isolate-id.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import { EdgeAdmission } from "./edge-admission.ts";
import { ReportBatches } from "./report-batches.ts";

/** The sync loop running in some live request's `waitUntil` (sync-loop.ts). */
export interface SyncLoop {
  readonly startedAt: number;
  /** When it wakes next; null while it is syncing or deciding. */
  wakeAt: number | null;
  /** The push socket this loop's request opened (push-socket.ts), closed when the loop ends. */
  socket: PushSocket | null;
}

/** A push socket to the pool's coordinator (push-socket.ts). */
export interface PushSocket {
  readonly ws: WebSocket;
}

export interface EdgePool {
  readonly replica: EdgeReplica;
  /** The pool's admission over the replica (off without `admission` settings). */
  readonly admission: EdgeAdmission;
  readonly reports: ReportBatches;
  /** The settings the replica runs (the latest request's). */
  ref: PoolRef;
  /** This isolate's colo group: which coordinator it syncs with. */
  group: number;
  loop: SyncLoop | null;
  /**
   * The sync in flight, whichever loop or request sent it; cleared when it settles. No promise:
   * only the request that sent it may await it (sync-loop.ts, defect F).
   */
  inFlight: { readonly token: object; readonly startedAt: number } | null;
  /** The newest loop's push socket, while open. */
  socket: PushSocket | null;
  /** No socket is opened before this (one failed to open, or closed). */
  socketRetryAt: number;
}

export class ReplicaRegistry {
  readonly #pools = new Map<string, EdgePool>();
  #isolate: string | null;

  /** `isolate`: this isolate's id (tests name theirs); drawn at first use otherwise. */
  constructor(isolate: string | null = null) {
    this.#isolate = isolate;
  }

  /**
   * Unique per isolate start: the coordinator's ledger and the replica's tickets use it. 128
   * random bits (isolate-id.ts): a collision would hide this isolate's load from its pool.
   */
  get isolate(): string {
    // Random values are not available at module load in Workers, so the id is drawn here.
    this.#isolate ??= isolateId(crypto.getRandomValues(new Uint8Array(ISOLATE_ID_BYTES)));
    return this.#isolate;
  }

  /** The pool's replica, made or brought up to `ref`'s settings, syncing with `group`. */
  get(ref: PoolRef, group: number): EdgePool {
    let held = this.#pools.get(ref.model);
    if (!held) {
      const replica = new EdgeReplica(ref.pool, { model: ref.model, isolate: this.isolate });
      held = {
        replica,
        admission: new EdgeAdmission(replica, ref.pool.admission),
        reports: new ReportBatches(ref.pool.edge.bufferMaxRecords),
        ref,
        group,
        loop: null,
        inFlight: null,
        socket: null,
        socketRetryAt: 0,
      };
      this.#pools.set(ref.model, held);
    } else if (held.ref.version.fingerprint !== ref.version.fingerprint) {
      held.replica.applySettings(ref.pool);
      held.admission.configure(ref.pool.admission, Date.now());
    }
    held.ref = ref;
    held.group = group;
    return held;
  }

  /** The pool's replica if this isolate has routed for it. */
  peek(model: string): EdgePool | undefined {
    return this.#pools.get(model);
  }
}

/** One per isolate. */
export const replicaRegistry = new ReplicaRegistry();
