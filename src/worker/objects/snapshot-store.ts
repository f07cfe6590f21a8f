/**
 * The Durable Object's persistent state in its SQLite storage: the pool's settings (so a
 * restarted object routes at once, before any Worker pushes them) and the router snapshot.
 * A SQLite value is capped at 2 MB and an index snapshot can be tens of MB, so the snapshot is
 * split across rows of `SNAPSHOT_ROW_BYTES`; one synchronous transaction replaces all rows, so
 * a reader never sees half of one snapshot and half of another.
 * Also each origin's last applied webhook batch that changed more than load (`BatchMark`), so a
 * restarted object still refuses replays of those batches, and each origin's engine facts (its
 * reported health and KV capacity: core/engine-facts.ts), so a restart keeps them.
 */

import type { BatchMark } from "../../core/batch-ledger.ts";
import type { Health } from "../../core/engine-events.ts";
import type { EngineFacts } from "../../core/engine-facts.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import type { PoolVersion } from "../settings/pool-version.ts";

const HEALTH: ReadonlySet<Health> = new Set(["up", "draining", "down"]);

/** 1 MiB: half the 2 MB value cap, so row overhead can never push a row past it. */
const SNAPSHOT_ROW_BYTES = 1 << 20;

export interface StoredPool {
  model: string;
  pool: PoolSettings;
  version: PoolVersion;
}

export class SnapshotStore {
  readonly #storage: DurableObjectStorage;
  readonly #rowBytes: number;

  constructor(storage: DurableObjectStorage, rowBytes = SNAPSHOT_ROW_BYTES) {
    this.#storage = storage;
    this.#rowBytes = rowBytes;
    storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS pool (id INTEGER PRIMARY KEY CHECK (id = 0), value TEXT NOT NULL);
       CREATE TABLE IF NOT EXISTS snapshot (seq INTEGER PRIMARY KEY, data BLOB NOT NULL);
       CREATE TABLE IF NOT EXISTS batch_mark (origin TEXT PRIMARY KEY, id TEXT NOT NULL, at INTEGER NOT NULL);
       CREATE TABLE IF NOT EXISTS engine_facts (origin TEXT PRIMARY KEY, health TEXT, kv_capacity_tokens INTEGER);`,
    );
  }

  /** The stored settings as JSON text (the caller validates them: the schema may have moved). */
  loadPool(): unknown {
    const row = this.#storage.sql.exec<{ value: string }>("SELECT value FROM pool").toArray()[0];
    return row ? JSON.parse(row.value) : null;
  }

  savePool(stored: StoredPool): void {
    this.#storage.sql.exec(
      "INSERT OR REPLACE INTO pool (id, value) VALUES (0, ?)",
      JSON.stringify(stored),
    );
  }

  /** Each origin's last persisted batch; marks made before `since` (ms) are deleted instead. */
  loadMarks(since: number): [string, BatchMark][] {
    this.#storage.sql.exec("DELETE FROM batch_mark WHERE at < ?", since);
    return this.#storage.sql
      .exec<{ origin: string; id: string; at: number }>("SELECT origin, id, at FROM batch_mark")
      .toArray()
      .map((row) => [row.origin, { id: row.id, at: row.at }]);
  }

  saveMark(origin: string, mark: BatchMark): void {
    this.#storage.sql.exec(
      "INSERT OR REPLACE INTO batch_mark (origin, id, at) VALUES (?, ?, ?)",
      origin,
      mark.id,
      mark.at,
    );
  }

  /** Each origin's stored engine facts (a health this version does not know reads as none). */
  loadFacts(): [string, EngineFacts][] {
    return this.#storage.sql
      .exec<{ origin: string; health: string | null; kv_capacity_tokens: number | null }>(
        "SELECT origin, health, kv_capacity_tokens FROM engine_facts",
      )
      .toArray()
      .map((row) => [
        row.origin,
        {
          health: HEALTH.has(row.health as Health) ? (row.health as Health) : null,
          kvCapacityTokens: row.kv_capacity_tokens,
        },
      ]);
  }

  saveFacts(origin: string, facts: EngineFacts): void {
    this.#storage.sql.exec(
      "INSERT OR REPLACE INTO engine_facts (origin, health, kv_capacity_tokens) VALUES (?, ?, ?)",
      origin,
      facts.health,
      facts.kvCapacityTokens,
    );
  }

  deleteFacts(origin: string): void {
    this.#storage.sql.exec("DELETE FROM engine_facts WHERE origin = ?", origin);
  }

  loadSnapshot(): Uint8Array | null {
    const rows = this.#storage.sql
      .exec<{ data: ArrayBuffer }>("SELECT data FROM snapshot ORDER BY seq")
      .toArray();
    if (rows.length === 0) return null;
    let length = 0;
    for (const row of rows) length += row.data.byteLength;
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const row of rows) {
      bytes.set(new Uint8Array(row.data), at);
      at += row.data.byteLength;
    }
    return bytes;
  }

  saveSnapshot(bytes: Uint8Array): void {
    this.#storage.transactionSync(() => {
      this.clearSnapshot();
      for (let seq = 0, at = 0; at < bytes.length; seq++, at += this.#rowBytes) {
        this.#storage.sql.exec(
          "INSERT INTO snapshot (seq, data) VALUES (?, ?)",
          seq,
          bytes.slice(at, at + this.#rowBytes).buffer,
        );
      }
    });
  }

  clearSnapshot(): void {
    this.#storage.sql.exec("DELETE FROM snapshot");
  }

  /** Rows the snapshot occupies (for tests and the state page). */
  get snapshotRows(): number {
    return this.#storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM snapshot").one().n;
  }
}
