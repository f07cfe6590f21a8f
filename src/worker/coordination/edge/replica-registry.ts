/**
 * @module
 * This isolate's replicas of its edge-coordinated pools (docs/architecture.md, "The Worker's
 * edge path"): one `EdgeReplica` per pool, made at the pool's first request, brought up to new
 * settings when their fingerprint changes. Beside each: its admission (edge-admission.ts), the
 * reports waiting to ride with its syncs, and the state of its sync loop (sync-loop.ts).
 *
 * Memory: one budget per isolate across its pools (issue 23, defect H). A replica's index is
 * its memory (the queue is bounded apart, by `edge.bufferMaxRecords`): at most
 * REPLICA_BYTES_PER_CHUNK a chunk, so each pool's `edge.replicaMaxChunks` (262,144 by default:
 * up to 16 MB) alone let a few pools take most of a 128 MB isolate. The pools this isolate has
 * served share ISOLATE_REPLICA_CHUNKS (32 MiB of index): while their `replicaMaxChunks` sum to
 * more, each gets the same fraction of its own (`budgetShares`), the least recently used chunks
 * evicted down to it when a pool comes (the index is kept, not rebuilt empty:
 * core-router.ts `applySettings`). Two pools at the defaults keep their full index; three get
 * two thirds each.
 *
 * The registry is module scope (`replicaRegistry`): an isolate's memory outlives its requests,
 * which is what lets it route without a call. Tests make several registries to stand for
 * several isolates syncing with one coordinator.
 */
import { EdgeReplica } from "../../../core/edge/edge-replica.ts";
import { ISOLATE_ID_BYTES, isolateId } from "../../../core/edge/isolate-id.ts";
import type { PoolSettings } from "../../../core/settings/settings-schema.ts";
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

/**
 * Bytes of index per chunk, from above: measured 42 with long labels (48-chunk conversations,
 * stride 1) and 57 at the default stride 8 (6 index chunks a conversation), arrays' growth
 * slack included (`index.bytes` in stats, 262,144 chunks).
 */
export const REPLICA_BYTES_PER_CHUNK = 64;
/** Index chunks one isolate's replicas hold in all: 32 MiB, a quarter of its 128 MB. */
export const ISOLATE_REPLICA_CHUNKS = (32 * 2 ** 20) / REPLICA_BYTES_PER_CHUNK;
/** No replica's share falls below the settings' least `replicaMaxChunks`. */
const MIN_SHARE = 1000;

/**
 * Each pool's index cap under a budget of `budget` chunks: its `replicaMaxChunks`, scaled by
 * one fraction for all when they sum to more than the budget.
 */
export function budgetShares(wanted: readonly number[], budget: number): number[] {
  const sum = wanted.reduce((n, w) => n + w, 0);
  const scale = Math.min(1, budget / sum);
  return wanted.map((w) => Math.max(MIN_SHARE, Math.floor(w * scale)));
}

export interface EdgePool {
  readonly replica: EdgeReplica;
  /** The index cap the isolate's budget gives the replica (at most `edge.replicaMaxChunks`). */
  maxChunks: number;
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
  readonly #budget: number;

  /**
   * `isolate`: this isolate's id (tests name theirs); drawn at first use otherwise. `budget`:
   * index chunks across its pools (tests set a small one).
   */
  constructor(isolate: string | null = null, budget = ISOLATE_REPLICA_CHUNKS) {
    this.#isolate = isolate;
    this.#budget = budget;
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
    const changed = held?.ref.version.fingerprint !== ref.version.fingerprint;
    if (!held) {
      const replica = new EdgeReplica(ref.pool, { model: ref.model, isolate: this.isolate });
      held = {
        replica,
        maxChunks: ref.pool.edge.replicaMaxChunks,
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
    } else if (changed) {
      held.admission.configure(ref.pool.admission, Date.now());
    }
    held.ref = ref;
    held.group = group;
    // A new pool or new settings (another replicaMaxChunks) move every pool's share.
    if (changed) this.#share(held);
    return held;
  }

  /** Each replica capped at its share of the budget; `fresh`'s new settings applied too. */
  #share(fresh: EdgePool): void {
    const pools = [...this.#pools.values()];
    const shares = budgetShares(
      pools.map((p) => p.ref.pool.edge.replicaMaxChunks),
      this.#budget,
    );
    pools.forEach((p, i) => {
      const share = shares[i] as number;
      if (share === p.maxChunks && p !== fresh) return;
      p.maxChunks = share;
      p.replica.applySettings(capped(p.ref.pool, share));
    });
  }

  /** The pool's replica if this isolate has routed for it. */
  peek(model: string): EdgePool | undefined {
    return this.#pools.get(model);
  }
}

function capped(pool: PoolSettings, maxChunks: number): PoolSettings {
  return { ...pool, edge: { ...pool.edge, replicaMaxChunks: maxChunks } };
}

/** One per isolate. */
export const replicaRegistry = new ReplicaRegistry();
