/**
 * The settings document as this isolate knows it: read from KV (key `settings`), validated with
 * the core's schema, and reused for `ttlMs` so a request costs no KV read. A document that fails
 * validation never replaces a good one: the isolate keeps routing with the last good settings
 * and reports the bad document's errors on `/admin/state`. Each pool gets a `PoolVersion` (the
 * document's revision from KV metadata and a fingerprint of the pool's parsed settings), which
 * the Durable Object compares to know whether it holds the same settings.
 */
import { seedHash } from "../../core/chunk-hash.ts";
import {
  formatSettingsErrors,
  parseSettings,
  type SettingsError,
} from "../../core/settings/parse-settings.ts";
import {
  DEFAULT_MAX_BODY_BYTES,
  type PoolSettings,
  type Settings,
} from "../../core/settings/settings-schema.ts";
import { ApiError } from "../errors/api-error.ts";
import type { PoolVersion } from "./pool-version.ts";

export const SETTINGS_KEY = "settings";

export interface SettingsMetadata {
  /**
   * Write time in ms, unique among the writes of one isolate (see `nextRevision`); newer
   * settings win over older ones in the Durable Objects.
   */
  revision?: number;
}

export interface LoadedSettings {
  readonly settings: Settings;
  readonly revision: number;
  readonly loadedAt: number;
  /**
   * The largest `maxBodyBytes` of any pool: the limit before the model is known (the default
   * limit when there is no pool, so the request is read and its model found unknown: 404).
   */
  readonly maxBodyBytes: number;
  pool(model: string): PoolSettings | undefined;
  version(model: string): PoolVersion;
}

export interface SettingsStatus {
  revision: number | null;
  loadedAt: number | null;
  /** The document in KV that failed validation (null when KV holds the settings in use). */
  rejected: { at: number; errors: SettingsError[] } | null;
}

/** Settings ready for requests: pools by model, each pool's version, the body limit. */
export function loadSettings(settings: Settings, revision: number, now: number): LoadedSettings {
  const pools = new Map(Object.entries(settings.pools));
  const versions = new Map<string, PoolVersion>();
  for (const [model, pool] of pools) {
    versions.set(model, { revision, fingerprint: seedHash(JSON.stringify(pool)).toString(36) });
  }
  let maxBodyBytes = pools.size === 0 ? DEFAULT_MAX_BODY_BYTES : 0;
  for (const pool of pools.values()) maxBodyBytes = Math.max(maxBodyBytes, pool.maxBodyBytes);
  return {
    settings,
    revision,
    loadedAt: now,
    maxBodyBytes,
    pool: (model) => pools.get(model),
    version: (model) => versions.get(model) ?? { revision, fingerprint: "" },
  };
}

export class SettingsCache {
  #current: LoadedSettings | null = null;
  #currentText: string | null = null;
  #rejected: SettingsStatus["rejected"] = null;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #lastIssued = 0;

  /**
   * The settings in force; reads KV when the cached copy is older than `ttlMs`. Requests that
   * find it stale at once each read KV (a local cache hit): sharing one read's promise across
   * requests would leave the others hanging if the request that started it were cancelled.
   */
  async get(kv: KVNamespace, ttlMs: number, now: number): Promise<LoadedSettings> {
    if (now - this.#checkedAt >= ttlMs) await this.#refresh(kv, now);
    if (this.#current) return this.#current;
    if (this.#rejected) {
      throw new ApiError(503, "server_error", "settings_invalid", "router settings are invalid");
    }
    throw new ApiError(503, "server_error", "settings_missing", "router settings are not set");
  }

  async #refresh(kv: KVNamespace, now: number): Promise<void> {
    let read: KVNamespaceGetWithMetadataResult<string, SettingsMetadata>;
    try {
      read = await kv.getWithMetadata<SettingsMetadata>(SETTINGS_KEY, "text");
    } catch (error) {
      // Keep what we have; the next request after the TTL tries again.
      console.error("settings: KV read failed:", error);
      this.#checkedAt = now;
      return;
    }
    this.#checkedAt = now;
    const revision = read.metadata?.revision ?? 0;
    if (read.value === null) return;
    if (read.value === this.#currentText && revision === this.#current?.revision) return;
    let input: unknown;
    try {
      input = JSON.parse(read.value);
    } catch {
      this.#reject(now, [{ field: "(document)", reason: "is not valid JSON" }]);
      return;
    }
    const parsed = parseSettings(input);
    if (!parsed.ok) {
      this.#reject(now, parsed.errors);
      return;
    }
    this.#use(loadSettings(parsed.value, revision, now), read.value);
  }

  #reject(now: number, errors: SettingsError[]): void {
    if (this.#rejected === null) {
      console.error(`settings: KV document rejected: ${formatSettingsErrors(errors)}`);
    }
    this.#rejected = { at: now, errors };
  }

  /**
   * The revision for a document this isolate is about to write: the write time in ms, but after
   * every revision it has issued or holds, so two writes through one isolate never share one,
   * even in the same millisecond (taken synchronously, before any await of the write).
   */
  nextRevision(now: number): number {
    const revision = Math.max(now, this.#lastIssued + 1, (this.#current?.revision ?? 0) + 1);
    this.#lastIssued = revision;
    return revision;
  }

  /**
   * Use `loaded` now (the admin API just wrote it), unless this isolate already holds a newer
   * revision: a concurrent write that finished first must not be rolled back here.
   */
  adopt(loaded: LoadedSettings, text: string): void {
    if (this.#current && this.#current.revision > loaded.revision) return;
    this.#use(loaded, text);
  }

  #use(loaded: LoadedSettings, text: string): void {
    this.#current = loaded;
    this.#currentText = text;
    this.#rejected = null;
    this.#checkedAt = loaded.loadedAt;
  }

  status(): SettingsStatus {
    return {
      revision: this.#current?.revision ?? null,
      loadedAt: this.#current?.loadedAt ?? null,
      rejected: this.#rejected,
    };
  }
}

/** The isolate's cache: module state lives as long as the isolate, across requests. */
export const settingsCache = new SettingsCache();

/** The cache TTL from the `SETTINGS_CACHE_MS` var (default 5 s). */
export function settingsTtl(env: Env): number {
  const ms = Number(env.SETTINGS_CACHE_MS);
  return Number.isFinite(ms) && ms >= 0 ? ms : 5000;
}

/** The settings in force for a request (the isolate's cache, refreshed after the TTL). */
export function currentSettings(env: Env): Promise<LoadedSettings> {
  return settingsCache.get(env.SETTINGS, settingsTtl(env), Date.now());
}
