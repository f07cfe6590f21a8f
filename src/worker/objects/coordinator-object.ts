/**
 * A coordinator of an edge-coordinated pool (docs/architecture.md, "The Worker's edge path"):
 * one Durable Object per pool and colo group (edge-stubs.ts), holding the core's
 * `EdgeCoordinator`. Two ways in: `sync` (an isolate's batch of records in, what the other
 * isolates changed since that isolate's version out, in one call) and push sockets:
 *
 * - Push (hibernation API): an isolate's upgrade request (`fetch`) is accepted with
 *   `ctx.acceptWebSocket`, tagged with its isolate id, and sent its catch-up frame
 *   (`EdgeCoordinator.catchUp`); batches come up it (`webSocketMessage`), applied as a sync's.
 *   Every FRAME_TICK_MS while batches or syncs come (at once when `flushRecords` records were applied
 *   since the last frame), one frame is built and its one text sent to every socket
 *   (`ctx.getWebSockets()`); nothing is built per isolate. The tick is a timer, not the alarm:
 *   an alarm invocation is a billed request (50 a second at this tick) and the one alarm slot
 *   is the snapshot's; a timer keeps the object from hibernating only while it runs, and it
 *   stops FRAME_IDLE_MS after the last batch or sync, so an idle pool's object hibernates with its
 *   sockets open (the runtime keeps them; a restarted object's new epoch makes every replica
 *   sync for a bootstrap at its next frame). A batch made under newer settings closes its socket
 *   (code 4009): the isolate syncs, which brings the settings, and opens another.
 *
 * Around the core it does what only an object can:
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
import { encodeFrame } from "../../core/edge/push-frame.ts";
import { FRAME_IDLE_MS, FRAME_TICK_MS } from "../../core/edge/push-timing.ts";
import type { SyncAnswer } from "../../core/edge/sync-protocol.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { PoolMetrics } from "../pool-metrics/pool-metrics.ts";
import type { RequestReport } from "../request-record/request-report.ts";
import { needsSettings, type PoolVersion } from "../settings/pool-version.ts";
import {
  type CoordinatorState,
  type PushUpload,
  parsePushQuery,
  type SyncCall,
} from "./edge-rpc-types.ts";
import { coordinatorName, rootStub } from "./edge-stubs.ts";
import { ObjectStart } from "./object-start.ts";
import { withSettings } from "./settings-first.ts";
import { restoreSnapshot, SnapshotAlarm } from "./snapshot-alarm.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { parseStoredGroup, type StoredGroup } from "./stored-pool.ts";
import { withDeadline } from "./with-deadline.ts";

/** A root that does not answer within this is asked again at the next interval. */
const ROOT_TIMEOUT_MS = 2000;
/** The close code that sends an isolate to `sync` for newer settings. */
export const CLOSE_SETTINGS = 4009;

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
  #tick: ReturnType<typeof setTimeout> | null = null;
  #activeAt = Number.NEGATIVE_INFINITY;
  /** Records applied since the last frame (at `flushRecords`, the frame goes at once). */
  #sinceFrame = 0;

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
    if (call.request.batch && !answer.duplicate) this.#applied(call.request.batch, call.reports);
    this.#exchangeWithRoot(coordinator, held, now);
    this.#active(now);
    return answer;
  }

  /** An isolate's socket: accepted for hibernation, tagged with its id, sent its catch-up. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    this.#ready();
    const query = parsePushQuery(request.url);
    const coordinator = this.#coordinator;
    if (!query) return new Response("expected ?isolate=", { status: 400 });
    // No settings yet: the isolate's sync brings them, then it opens a socket again.
    if (!coordinator) return new Response("no settings", { status: 409 });
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, [query.isolate]);
    const catchUp = coordinator.catchUp(query.isolate, query.since, Date.now());
    if (catchUp) server.send(encodeFrame(catchUp));
    this.#active(Date.now());
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A batch up a socket: applied as a sync's batch; the next frame acknowledges it. */
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    this.#ready();
    const coordinator = this.#coordinator;
    const held = this.#held;
    const upload = parseUpload(message);
    if (!coordinator || !held || !upload) return;
    if (needsSettings(held.version, upload.version)) {
      ws.close(CLOSE_SETTINGS, "newer settings: sync first");
      return;
    }
    const now = Date.now();
    if (coordinator.upload(upload.isolate, upload.batch, now) === "applied") {
      this.#applied(upload.batch, upload.reports);
    }
    this.#exchangeWithRoot(coordinator, held, now);
    this.#active(now);
    if (this.#sinceFrame >= held.pool.edge.flushRecords) this.#frame();
  }

  override webSocketClose(ws: WebSocket, code: number, reason: string): void {
    // Complete the closing handshake (the runtime may have done it already).
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {}
  }

  /** A batch was applied (a sync's or a socket's): its reports counted once, a snapshot due. */
  #applied(batch: { records: readonly unknown[] }, reports: readonly RequestReport[]): void {
    const now = Date.now();
    for (const report of reports) this.#metrics.record(report, now);
    this.#sinceFrame += batch.records.length;
    this.#touch();
  }

  /** Batches or syncs came: tick while sockets are open, until FRAME_IDLE_MS after the last. */
  #active(now: number): void {
    this.#activeAt = now;
    if (this.#tick === null) this.#tick = setTimeout(() => this.#frame(), FRAME_TICK_MS);
  }

  /** One frame, its text to every socket; the next tick while batches keep coming. */
  #frame(): void {
    if (this.#tick !== null) clearTimeout(this.#tick);
    this.#tick = null;
    const sockets = this.ctx.getWebSockets();
    const coordinator = this.#coordinator;
    if (!coordinator || sockets.length === 0) return;
    const now = Date.now();
    const frame = coordinator.frame(now);
    this.#sinceFrame = 0;
    if (frame) {
      const text = encodeFrame(frame);
      for (const ws of sockets) {
        try {
          ws.send(text);
        } catch {
          // Closing: its isolate falls back to sync.
        }
      }
    }
    if (now - this.#activeAt < FRAME_IDLE_MS)
      this.#tick = setTimeout(() => this.#frame(), FRAME_TICK_MS);
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
      sockets: this.ctx.getWebSockets().length,
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

/** An upload's JSON, or null when it is not one (ignored: the isolate resends unacknowledged). */
function parseUpload(message: string | ArrayBuffer): PushUpload | null {
  if (typeof message !== "string") return null;
  try {
    const upload = JSON.parse(message) as PushUpload;
    const ok =
      upload.t === "batch" &&
      typeof upload.isolate === "string" &&
      Number.isInteger(upload.batch?.id) &&
      Array.isArray(upload.batch.records) &&
      Array.isArray(upload.reports);
    return ok ? upload : null;
  } catch {
    return null;
  }
}
