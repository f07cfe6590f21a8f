/**
 * A coordinator of an edge-coordinated pool (docs/architecture.md, "The Worker's edge path"):
 * one Durable Object per pool and colo group (edge-stubs.ts), holding the core's
 * `EdgeCoordinator`. Its one hot method is `sync`: an isolate's batch of records in, what the
 * other isolates changed since that isolate's version out, in one call. Around the core it
 * does what only an object can:
 *
 * - Settings as the pool's object takes them (settings/pool-version.ts): a sync made under
 *   newer settings is answered null, and the Worker pushes them with `applySettings`.
 * - Metrics: the reports riding with a batch go to a `PoolMetrics`, once per batch (a retried
 *   batch's are not counted again), so `/metrics` and the dashboard see every isolate's
 *   requests as in object mode.
 * - The root: after a sync, when `edge.rootIntervalMs` has passed since the last exchange, the
 *   group's load goes to the pool's root and the other groups' load and the engines' state
 *   (webhooks) come back, off the sync's path (`waitUntil`). An idle group makes no calls.
 * - Restarts: the epoch is drawn per start, so every replica's next sync, whatever version
 *   it names, gets a bootstrap (versions restart with the log). The index survives: an alarm
 *   writes a snapshot after changes, restored at start (the bootstrap then carries it), and
 *   sweeps expired leases (snapshot-alarm.ts, as the pool's object). Leases and the per-isolate batch
 *   ledger live in memory and start empty, together: a batch whose answer was lost across a
 *   restart is applied again by the new life, which leases its requests once (the old life's
 *   leases went with it) and counts its reports once in the new life's metrics; claims are
 *   idempotent. The other requests still running come back as each replica, seeing the new
 *   epoch's life, sends their routes again (core/edge/replica-sync.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { EdgeCoordinator } from "../../core/edge/edge-coordinator.ts";
import type { SyncAnswer } from "../../core/edge/sync-protocol.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { PoolMetrics } from "../pool-metrics/pool-metrics.ts";
import { needsSettings, type PoolVersion } from "../settings/pool-version.ts";
import type { CoordinatorState, SyncCall } from "./edge-rpc-types.ts";
import { coordinatorName, rootStub } from "./edge-stubs.ts";
import { ObjectStart } from "./object-start.ts";
import { withSettings } from "./settings-first.ts";
import { restoreSnapshot, SnapshotAlarm } from "./snapshot-alarm.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { parseStoredGroup, type StoredGroup } from "./stored-pool.ts";
import { withDeadline } from "./with-deadline.ts";

/** A root that does not answer within this is asked again at the next interval. */
const ROOT_TIMEOUT_MS = 2000;

export class CoordinatorObject extends DurableObject<Env> {
  readonly #epoch = crypto.randomUUID();
  readonly #boot: ObjectStart;
  #coordinator: EdgeCoordinator | null = null;
  #held: StoredGroup | null = null;
  readonly #metrics = new PoolMetrics(Date.now());
  readonly #persist: SnapshotAlarm;
  #rootAskedAt = Number.NEGATIVE_INFINITY;
  #rootAnsweredAt: number | null = null;
  #rootBusy = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#persist = new SnapshotAlarm(ctx);
    this.#boot = new ObjectStart(
      ctx,
      (store) => {
        const stored = parseStoredGroup(store.loadPool());
        if (stored) this.#install(stored, store);
      },
      "coordinator",
    );
    this.#boot.begin();
  }

  #ready(): SnapshotStore {
    return this.#boot.ready();
  }

  #install(stored: StoredGroup, store: SnapshotStore): void {
    const coordinator = new EdgeCoordinator(stored.pool, {
      model: stored.model,
      epoch: this.#epoch,
      id: coordinatorName(stored.model, stored.group),
    });
    restoreSnapshot(store, coordinator, `coordinator ${stored.model}`);
    this.#coordinator = coordinator;
    this.#held = stored;
  }

  #touch(): void {
    this.#persist.touch();
  }

  /**
   * Apply an isolate's batch and answer with what changed since its version; null when the
   * caller must `applySettings` first.
   */
  sync(call: SyncCall): SyncAnswer | null {
    this.#ready();
    const coordinator = this.#coordinator;
    const held = this.#held;
    if (!coordinator || !held || needsSettings(held.version, call.version)) return null;
    const now = Date.now();
    const answer = coordinator.sync(call.request, now);
    if (call.request.batch && !answer.duplicate) {
      for (const report of call.reports) this.#metrics.record(report, now);
      this.#touch();
    }
    this.#exchangeWithRoot(coordinator, held, now);
    return answer;
  }

  /** Take the pool's settings (and this object's group), unless it holds newer ones. */
  applySettings(model: string, pool: PoolSettings, version: PoolVersion, group: number): void {
    const store = this.#ready();
    if (this.#held && !needsSettings(this.#held.version, version)) return;
    const stored: StoredGroup = { model, pool, version, group };
    this.#metrics.retainOrigins(pool.origins.map((o) => o.id));
    if (this.#coordinator && this.#held?.group === group) {
      this.#coordinator.applySettings(pool);
      this.#held = stored;
    } else {
      this.#install(stored, store);
    }
    store.savePool(stored);
  }

  state(): CoordinatorState | null {
    const store = this.#ready();
    const coordinator = this.#coordinator;
    const held = this.#held;
    if (!coordinator || !held) return null;
    const now = Date.now();
    return {
      model: held.model,
      version: held.version,
      router: coordinator.stats(now),
      metrics: this.#metrics.snapshot(now),
      snapshotRows: store.snapshotRows,
      group: held.group,
      epoch: coordinator.epoch,
      logVersion: coordinator.version,
      counters: { ...coordinator.counters },
      isolates: coordinator.isolates(now),
      rootAgeMs: this.#rootAnsweredAt === null ? null : now - this.#rootAnsweredAt,
    };
  }

  override async alarm(): Promise<void> {
    const coordinator = this.#coordinator;
    this.#persist.run(
      () => this.#ready(),
      coordinator && { snapshot: () => coordinator.snapshot(), leases: coordinator.router },
    );
  }

  /** Every `rootIntervalMs` while syncs come: this group's load out, the rest of the pool's in. */
  #exchangeWithRoot(coordinator: EdgeCoordinator, held: StoredGroup, now: number): void {
    if (this.#rootBusy || now - this.#rootAskedAt < held.pool.edge.rootIntervalMs) return;
    this.#rootBusy = true;
    this.#rootAskedAt = now;
    const exchange = async () => {
      const stub = rootStub(this.env, held.model, held.pool);
      const answer = await withSettings(
        () =>
          withDeadline(
            stub.exchange(coordinator.rootReport(Date.now()), held.version),
            ROOT_TIMEOUT_MS,
          ),
        () => stub.applySettings(held.model, held.pool, held.version),
        `edge root of ${held.model}`,
      );
      // A coordinator rebuilt meanwhile (new settings group) asks again at its next interval.
      if (this.#coordinator === coordinator) {
        coordinator.onRootAnswer(answer, Date.now());
        this.#rootAnsweredAt = Date.now();
      }
    };
    this.ctx.waitUntil(
      exchange()
        .catch((error) => console.warn(`coordinator ${held.model}: root exchange: ${error}`))
        .finally(() => {
          this.#rootBusy = false;
        }),
    );
  }
}
