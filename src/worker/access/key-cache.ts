/**
 * @module
 * Client keys as this isolate knows them: which pools need a key, and the records of the
 * keys it has been shown, each reused for `ttlMs` (the settings' `SETTINGS_CACHE_MS`) so a
 * request costs no KV read. Unknown ids are remembered too (as null), and at most `MAX_ENTRIES`
 * ids are held, oldest dropped first, so clients sending made-up keys cost one KV read per id
 * and TTL and cannot grow the isolate's memory. A KV read that fails keeps what was known (the
 * next request after the TTL tries again); with nothing known the request is refused with a 503
 * rather than let in. The admin API's writes land here at once for the isolate that made them.
 */
import { ApiError } from "../errors/api-error.ts";
import type { ClientKeyRecord } from "./key-record.ts";
import { type Enforcement, readEnforcement, readKey, withKey } from "./key-store.ts";

const MAX_ENTRIES = 4096;

interface Entry<T> {
  value: T;
  at: number;
}

const unavailable = () =>
  new ApiError(503, "server_error", "keys_unavailable", "client keys cannot be read; try again", {
    headers: { "retry-after": "1" },
  });

export class KeyCache {
  #enforced: Entry<Enforcement> | null = null;
  #records = new Map<string, Entry<ClientKeyRecord | null>>();

  async enforcement(kv: KVNamespace, ttlMs: number, now: number): Promise<Enforcement> {
    const known = this.#enforced;
    if (known && now - known.at < ttlMs) return known.value;
    try {
      this.#enforced = { value: await readEnforcement(kv), at: now };
    } catch (error) {
      console.error("client keys: KV read failed:", error);
      if (!known) throw unavailable();
      this.#enforced = { value: known.value, at: now };
    }
    return this.#enforced.value;
  }

  /** Key `id`'s record, or null when no such key exists (as of `ttlMs` ago at most). */
  async record(
    kv: KVNamespace,
    id: string,
    ttlMs: number,
    now: number,
  ): Promise<ClientKeyRecord | null> {
    const known = this.#records.get(id);
    if (known && now - known.at < ttlMs) return known.value;
    let value: ClientKeyRecord | null;
    try {
      value = await readKey(kv, id);
    } catch (error) {
      console.error(`client key ${id}: KV read failed:`, error);
      if (!known) throw unavailable();
      value = known.value;
    }
    this.#set(id, value, now);
    return value;
  }

  /** A key this isolate just created: usable here at once, and its pools enforced. */
  created(record: ClientKeyRecord, now: number): void {
    this.#set(record.id, record, now);
    if (this.#enforced) {
      this.#enforced = { value: withKey(this.#enforced.value, record), at: this.#enforced.at };
    }
  }

  /** A key this isolate just revoked: refused here at once. */
  revoked(id: string, now: number): void {
    this.#set(id, null, now);
  }

  #set(id: string, value: ClientKeyRecord | null, now: number): void {
    this.#records.delete(id);
    if (this.#records.size >= MAX_ENTRIES) {
      const oldest = this.#records.keys().next().value;
      if (oldest !== undefined) this.#records.delete(oldest);
    }
    this.#records.set(id, { value, at: now });
  }
}

/** The isolate's cache: module state lives as long as the isolate, across requests. */
export const keyCache = new KeyCache();
