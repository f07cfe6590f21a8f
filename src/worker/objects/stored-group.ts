/**
 * What an edge coordination object keeps of its settings in SQLite (the pool object's
 * `SnapshotStore` tables): the pool, its version and, for a coordinator, its colo group, so a
 * restarted object serves at once. Stored settings written by an earlier version may no longer
 * parse: then the object waits for the next caller to push them.
 */
import { poolSettings } from "../../core/settings/settings-schema.ts";
import type { StoredPool } from "./snapshot-store.ts";

export interface StoredGroup extends StoredPool {
  /** The coordinator's colo group (0 for the root). */
  readonly group: number;
}

export function parseStoredGroup(value: unknown): StoredGroup | null {
  if (value === null || typeof value !== "object") return null;
  const { model, pool, version, group } = value as Partial<StoredGroup>;
  const parsed = poolSettings.safeParse(pool);
  if (typeof model !== "string" || !parsed.success || !version) return null;
  return {
    model,
    pool: parsed.data,
    version,
    group: Number.isInteger(group) ? (group as number) : 0,
  };
}
