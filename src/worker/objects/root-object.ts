/**
 * The root of an edge-coordinated pool (docs/architecture.md, "The Worker's edge path"): one
 * Durable Object per pool (edge-stubs.ts) holding the core's `EdgeRoot`. It takes the engines'
 * webhooks for the pool (`ingest`, which the Worker calls instead of the pool's object) and
 * each coordinator's exchange (`exchange`, every `edge.rootIntervalMs` while the coordinator's
 * isolates sync): the coordinator's share of the load in, the other groups' shares and every
 * engine's latest state out. Coordinators pass engine state on to their replicas in their next
 * sync answer, so a webhook reaches every isolate within about one root interval plus one sync.
 *
 * Which webhook batches to apply is the pool object's rule, with the same persisted marks for
 * batches that change state, so a restarted root still refuses their replays (webhook-book.ts).
 * Its engine state is the latest, never a log, and a restart is a new epoch that coordinators
 * take as it is (edge-root.ts); so the engines' facts (health, KV capacity) are kept in storage
 * as the pool's object keeps them and stated again to the new root, or a restart would tell
 * every coordinator that a `down` origin is `up`. Load starts unknown and returns with the next
 * reports; cache resets already reached the coordinators' indexes.
 */
import { DurableObject } from "cloudflare:workers";
import { EdgeRoot } from "../../core/edge/edge-root.ts";
import type { RootAnswer, RootReport } from "../../core/edge/sync-protocol.ts";
import type { EngineEvent, EngineEventBatch } from "../../core/engine-events.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { needsSettings, type PoolVersion } from "../settings/pool-version.ts";
import type { RootState } from "./edge-rpc-types.ts";
import { ObjectStart } from "./object-start.ts";
import type { IngestOutcome } from "./rpc-types.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { parseStoredGroup, type StoredGroup } from "./stored-pool.ts";
import { WebhookBook } from "./webhook-book.ts";

export class RootObject extends DurableObject<Env> {
  readonly #epoch = crypto.randomUUID();
  readonly #boot: ObjectStart;
  #root: EdgeRoot | null = null;
  #held: StoredGroup | null = null;
  readonly #webhooks = new WebhookBook();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#boot = new ObjectStart(
      ctx,
      (store) => {
        const now = Date.now();
        this.#webhooks.load(store, now);
        const stored = parseStoredGroup(store.loadPool());
        if (stored) this.#install(stored, store);
      },
      "edge root",
    );
    this.#boot.begin();
  }

  #ready(): SnapshotStore {
    return this.#boot.ready();
  }

  #install(stored: StoredGroup, store: SnapshotStore): void {
    this.#held = stored;
    if (this.#root) {
      this.#root.applySettings(stored.pool);
      this.#webhooks.retain(
        store,
        stored.pool.origins.map((o) => o.id),
      );
      return;
    }
    const root = new EdgeRoot(stored.pool, { epoch: this.#epoch });
    const now = Date.now();
    this.#webhooks.replay(store, (origin, events) => root.ingest(origin, events, now));
    this.#root = root;
  }

  /** The root, if it holds settings at least as new as the caller's. */
  #rootFor(version: PoolVersion): EdgeRoot | null {
    this.#ready();
    if (!this.#root || !this.#held || needsSettings(this.#held.version, version)) return null;
    return this.#root;
  }

  /** One origin's batch of engine events, unless a replay or late; null: settings first. */
  ingest(batch: EngineEventBatch, version: PoolVersion): IngestOutcome | null {
    const root = this.#rootFor(version);
    if (!root) return null;
    const now = Date.now();
    const apply = (origin: string, events: EngineEvent[]) => root.ingest(origin, events, now);
    return this.#webhooks.ingest(() => this.#ready(), batch, apply, now).outcome;
  }

  /** A coordinator's share of the load for the rest of the pool's; null: settings first. */
  exchange(report: RootReport, version: PoolVersion): RootAnswer | null {
    const root = this.#rootFor(version);
    return root ? root.exchange(report, Date.now()) : null;
  }

  applySettings(model: string, pool: PoolSettings, version: PoolVersion): void {
    const store = this.#ready();
    if (this.#held && !needsSettings(this.#held.version, version)) return;
    const stored: StoredGroup = { model, pool, version, group: 0 };
    this.#install(stored, store);
    store.savePool(stored);
  }

  state(): RootState | null {
    this.#ready();
    const held = this.#held;
    return held && { model: held.model, version: held.version, epoch: this.#epoch };
  }
}
