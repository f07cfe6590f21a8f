/**
 * The pool object's stored-response affinity (src/core/responses/stored-responses.ts) and its
 * copy in the object's SQLite storage. Written through, one row per stored response, so the
 * object's eviction (every deploy, and idle periods) does not make every agent session's next
 * turn fail: the engine still holds its stored responses then, and only the router would have
 * forgotten where. One row per response is small beside the request that made it; the rows of
 * forgotten entries are deleted as they go, the expired ones in bulk by `sweep` (the object's
 * alarm). The router's index snapshot is no place for them: it is written every few seconds
 * at most, whole, and a response stored since the last one would be lost.
 */
import { type StoredResponse, StoredResponses } from "../../core/responses/stored-responses.ts";
import type { StoredResponseSettings } from "../../core/settings/stored-response-settings.ts";

export class StoredResponseBook {
  readonly #sql: SqlStorage;
  #map: StoredResponses | null = null;
  #limits: StoredResponseSettings | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#sql = storage.sql;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS stored_response (id TEXT PRIMARY KEY, origin TEXT NOT NULL, at INTEGER NOT NULL);
       CREATE INDEX IF NOT EXISTS stored_response_at ON stored_response (at);`,
    );
  }

  /** The map under the pool's limits, loaded from storage the first time (newest kept). */
  #under(limits: StoredResponseSettings, now: number): StoredResponses {
    if (this.#map === null) {
      const map = new StoredResponses(limits);
      const rows = this.#sql
        .exec<{ id: string; origin: string; at: number }>(
          "SELECT id, origin, at FROM stored_response WHERE at > ? ORDER BY at DESC LIMIT ?",
          now - limits.ttlMs,
          limits.maxEntries,
        )
        .toArray()
        .reverse();
      for (const row of rows) map.remember(row.id, row.origin, row.at);
      this.#map = map;
    } else if (
      this.#limits?.maxEntries !== limits.maxEntries ||
      this.#limits.ttlMs !== limits.ttlMs
    ) {
      this.#delete(this.#map.configure(limits, now));
    }
    this.#limits = limits;
    return this.#map;
  }

  remember(id: string, origin: string, limits: StoredResponseSettings, now: number): void {
    const forgotten = this.#under(limits, now).remember(id, origin, now);
    this.#sql.exec(
      "INSERT OR REPLACE INTO stored_response (id, origin, at) VALUES (?, ?, ?)",
      id,
      origin,
      now,
    );
    this.#delete(forgotten);
  }

  lookup(id: string, limits: StoredResponseSettings, now: number): StoredResponse | null {
    return this.#under(limits, now).lookup(id, now);
  }

  /** The response was deleted at its origin: false if it was not known. */
  forget(id: string, limits: StoredResponseSettings, now: number): boolean {
    const known = this.#under(limits, now).forget(id);
    if (known) this.#sql.exec("DELETE FROM stored_response WHERE id = ?", id);
    return known;
  }

  /** Drop expired entries and their rows (the object's alarm). */
  sweep(now: number): void {
    const map = this.#map;
    const limits = this.#limits;
    if (map === null || limits === null) return;
    map.expire(now);
    this.#sql.exec("DELETE FROM stored_response WHERE at <= ?", now - limits.ttlMs);
  }

  /** Entries held under the pool's limits, loaded from storage if need be (the state page). */
  count(limits: StoredResponseSettings, now: number): number {
    return this.#under(limits, now).size;
  }

  #delete(entries: readonly StoredResponse[]): void {
    for (const entry of entries) {
      this.#sql.exec("DELETE FROM stored_response WHERE id = ? AND at = ?", entry.id, entry.at);
    }
  }
}
