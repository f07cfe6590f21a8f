/**
 * Which origin stored each OpenAI Responses id (docs/api.md, "Stored responses"): a request
 * naming a `previous_response_id` can only be served by the engine that stored it (vLLM keeps
 * stored responses in its own memory), so the router remembers where each stored response was
 * made and sends the follow-up there.
 *
 * A `Map` in the order entries were remembered (remembering an id again moves it to the end),
 * bounded two ways (settings/stored-response-settings.ts): at most `maxEntries`, the least
 * recently remembered forgotten first; and an entry is gone `ttlMs` after it was remembered.
 * `remember` and `expire` trim from the front, so each costs O(1) amortised; `lookup` checks an
 * entry's own age too, so a clock that stepped back (a restart on another machine) can keep
 * an expired entry in memory a while longer, never answer with it. What is forgotten is
 * returned to the caller, as node-lru-cache's `setpop` does. Pure: the time is passed in.
 */
import type { StoredResponseSettings } from "../settings/stored-response-settings.ts";

export interface StoredResponse {
  readonly id: string;
  /** The origin (its settings id) that answered, and so stores, the response. */
  readonly origin: string;
  /** When the router learned it (ms). */
  readonly at: number;
}

export class StoredResponses {
  readonly #entries = new Map<string, StoredResponse>();
  #limits: StoredResponseSettings;

  constructor(limits: StoredResponseSettings) {
    this.#limits = checked(limits);
  }

  /** New limits (settings changed); returns what no longer fits. */
  configure(limits: StoredResponseSettings, now: number): StoredResponse[] {
    this.#limits = checked(limits);
    return this.#trim(now);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** `origin` stored response `id` at `now`; returns the entries forgotten to make room. */
  remember(id: string, origin: string, now: number): StoredResponse[] {
    this.#entries.delete(id);
    this.#entries.set(id, { id, origin, at: now });
    return this.#trim(now);
  }

  /** Where `id` was stored, or null when it is unknown or expired (an expired entry goes). */
  lookup(id: string, now: number): StoredResponse | null {
    const entry = this.#entries.get(id);
    if (!entry) return null;
    if (this.#expired(entry, now)) {
      this.#entries.delete(id);
      return null;
    }
    return entry;
  }

  /** The response was deleted (`DELETE /v1/responses/{id}`): false if it was not known. */
  forget(id: string): boolean {
    return this.#entries.delete(id);
  }

  /** Forget entries past their TTL (from the oldest); returns them. */
  expire(now: number): StoredResponse[] {
    const gone: StoredResponse[] = [];
    for (const entry of this.#entries.values()) {
      if (!this.#expired(entry, now)) break;
      this.#entries.delete(entry.id);
      gone.push(entry);
    }
    return gone;
  }

  /** Every live entry, least recently remembered first (persistence, tests). */
  entries(): IterableIterator<StoredResponse> {
    return this.#entries.values();
  }

  #expired(entry: StoredResponse, now: number): boolean {
    return now - entry.at >= this.#limits.ttlMs;
  }

  #trim(now: number): StoredResponse[] {
    const gone = this.expire(now);
    for (const entry of this.#entries.values()) {
      if (this.#entries.size <= this.#limits.maxEntries) break;
      this.#entries.delete(entry.id);
      gone.push(entry);
    }
    return gone;
  }
}

function checked(limits: StoredResponseSettings): StoredResponseSettings {
  const { maxEntries, ttlMs } = limits;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`storedResponses.maxEntries must be an integer >= 1, got ${maxEntries}`);
  }
  if (!(ttlMs > 0)) throw new RangeError(`storedResponses.ttlMs must be > 0, got ${ttlMs}`);
  return { maxEntries, ttlMs };
}
