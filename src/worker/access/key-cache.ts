/**
 * @module
 * Client keys as this isolate knows them: which pools need a key (KV's marker per pool, `*`
 * for every pool) and the records of the keys it has been shown, each reused for `ttlMs` (the
 * settings' `SETTINGS_CACHE_MS`) so a request costs no KV read. Unknown ids are remembered too
 * (as null), and at most `MAX_ENTRIES` ids (and pools) are held, oldest dropped first, so
 * clients sending made-up keys cost one KV read per id and TTL and cannot grow the isolate's
 * memory. A KV read that fails keeps what was known (the next request after the TTL tries
 * again); with nothing known the request is refused with a 503 rather than let in. The admin
 * API's writes land here at once for the isolate that made them.
 */
import { ApiError } from "../errors/api-error.ts";
import { ANY_MODEL, type ClientKeyRecord } from "./key-record.ts";
import { readEnforced, readKey } from "./key-store.ts";

const MAX_ENTRIES = 4096;

interface Entry<T> {
  value: T;
  at: number;
}

const unavailable = () =>
  new ApiError(503, "server_error", "keys_unavailable", "client keys cannot be read; try again", {
    headers: { "retry-after": "1" },
  });

/** Values read from KV by name, each trusted for `ttlMs`, at most `MAX_ENTRIES` of them. */
class TtlCache<T> {
  #entries = new Map<string, Entry<T>>();

  async get(name: string, read: () => Promise<T>, ttlMs: number, now: number): Promise<T> {
    const known = this.#entries.get(name);
    if (known && now - known.at < ttlMs) return known.value;
    let value: T;
    try {
      value = await read();
    } catch (error) {
      console.error(`client keys: KV read of ${name} failed:`, error);
      if (!known) throw unavailable();
      value = known.value;
    }
    this.set(name, value, now);
    return value;
  }

  set(name: string, value: T, now: number): void {
    this.#entries.delete(name);
    if (this.#entries.size >= MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(name, { value, at: now });
  }
}

export class KeyCache {
  /** Per model (and `*`): whether a key ever named it. */
  #enforced = new TtlCache<boolean>();
  #records = new TtlCache<ClientKeyRecord | null>();

  /** Whether every pool needs a key (a key named `*`). */
  enforcedEverywhere(kv: KVNamespace, ttlMs: number, now: number): Promise<boolean> {
    return this.#enforced.get(ANY_MODEL, () => readEnforced(kv, ANY_MODEL), ttlMs, now);
  }

  /** Whether pool `model` needs a key: a key named it, or `*`. */
  async enforcedFor(kv: KVNamespace, model: string, ttlMs: number, now: number): Promise<boolean> {
    if (await this.enforcedEverywhere(kv, ttlMs, now)) return true;
    return this.#enforced.get(model, () => readEnforced(kv, model), ttlMs, now);
  }

  /** Key `id`'s record, or null when no such key exists (as of `ttlMs` ago at most). */
  record(kv: KVNamespace, id: string, ttlMs: number, now: number): Promise<ClientKeyRecord | null> {
    return this.#records.get(id, () => readKey(kv, id), ttlMs, now);
  }

  /** A key this isolate just created: usable here at once, and its pools enforced. */
  created(record: ClientKeyRecord, now: number): void {
    this.#records.set(record.id, record, now);
    for (const model of record.models) this.#enforced.set(model, true, now);
  }

  /** A key this isolate just revoked: refused here at once. */
  revoked(id: string, now: number): void {
    this.#records.set(id, null, now);
  }
}

/** The isolate's cache: module state lives as long as the isolate, across requests. */
export const keyCache = new KeyCache();
