/**
 * What an object keeps of its settings in SQLite (`SnapshotStore`'s pool row): the pool, its
 * version and, for a coordinator, its colo group, so a restarted object serves at once. Stored
 * settings written by an earlier version may no longer parse: then the object waits for the
 * next caller to push them.
 */
import { poolSettings } from "../../core/settings/settings-schema.ts";
import type { StoredPool } from "./snapshot-store.ts";

export interface StoredGroup extends StoredPool {
  /** The coordinator's colo group (0 for the root). */
  readonly group: number;
}

export function parseStoredPool(value: unknown): StoredPool | null {
  if (value === null || typeof value !== "object") return null;
  const { model, pool, version } = value as Partial<StoredPool>;
  const parsed = poolSettings.safeParse(pool);
  if (typeof model !== "string" || !parsed.success || !version) return null;
  return { model, pool: parsed.data, version };
}

/** An edge object's settings: the pool's, and its group (0 when it stored none). */
export function parseStoredGroup(value: unknown): StoredGroup | null {
  const stored = parseStoredPool(value);
  if (!stored) return null;
  const { group } = value as Partial<StoredGroup>;
  return { ...stored, group: Number.isInteger(group) ? (group as number) : 0 };
}
