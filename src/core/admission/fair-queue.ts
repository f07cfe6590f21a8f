/**
 * The router's waiting room: requests in priority bands (interactive before batch), and within
 * a band one FIFO per client key served in turn, one request each (round robin: deficit round
 * robin with a quantum of one request, Shreedhar and Varghese 1995). So while several keys
 * wait, each gets the same number of admissions whatever it sends, and a key that floods the
 * room waits behind its own requests, not in front of everyone else's. llm-d's flow control
 * orders its queues the same way (priority bands, then fairness between flows within a band).
 *
 * Pure bookkeeping: what to admit next (`shift`), how many would be admitted before a new
 * request (`ahead`), and which request to give up when the room is full (`longestKey`,
 * `newest`: a band's longest key loses its newest request, "longest queue drop"). Keys are few
 * (tens), so the per-key queues are arrays and the ring is an array of keys.
 */

export interface Waiting {
  readonly id: string;
  readonly key: string;
  /** 0 is served first (interactive), then 1 (batch). */
  readonly band: number;
  /** When it started waiting (the caller's clock, ms). */
  readonly since: number;
}

class Band<T extends Waiting> {
  readonly queues = new Map<string, T[]>();
  /** Keys with requests waiting, in the order they are served next. */
  readonly ring: string[] = [];
  size = 0;
}

export const BANDS = 2;

export class FairQueue<T extends Waiting> {
  readonly #bands: Band<T>[] = Array.from({ length: BANDS }, () => new Band<T>());
  readonly #byId = new Map<string, T>();

  get size(): number {
    return this.#byId.size;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** Requests waiting in `band`. */
  sizeOf(band: number): number {
    return this.#band(band).size;
  }

  /** Requests of `key` waiting in `band`. */
  count(band: number, key: string): number {
    return this.#band(band).queues.get(key)?.length ?? 0;
  }

  /** Keys with requests waiting in `band`. */
  keys(band: number): number {
    return this.#band(band).ring.length;
  }

  push(entry: T): void {
    if (this.#byId.has(entry.id)) throw new Error(`request ${entry.id} is already waiting`);
    const band = this.#band(entry.band);
    let queue = band.queues.get(entry.key);
    if (!queue) {
      queue = [];
      band.queues.set(entry.key, queue);
      band.ring.push(entry.key);
    }
    queue.push(entry);
    band.size++;
    this.#byId.set(entry.id, entry);
  }

  /** The next request to admit: the first band with any, the key whose turn it is, its oldest. */
  shift(): T | undefined {
    const band = this.#bands.find((b) => b.size > 0);
    if (!band) return undefined;
    const key = band.ring.shift() as string;
    const queue = band.queues.get(key) as T[];
    const entry = queue.shift() as T;
    if (queue.length > 0) band.ring.push(key);
    else band.queues.delete(key);
    band.size--;
    this.#byId.delete(entry.id);
    return entry;
  }

  remove(id: string): T | undefined {
    const entry = this.#byId.get(id);
    if (!entry) return undefined;
    const band = this.#band(entry.band);
    const queue = band.queues.get(entry.key) as T[];
    queue.splice(queue.indexOf(entry), 1);
    if (queue.length === 0) {
      band.queues.delete(entry.key);
      band.ring.splice(band.ring.indexOf(entry.key), 1);
    }
    band.size--;
    this.#byId.delete(id);
    return entry;
  }

  /**
   * Requests admitted before a new one of `key` in `band` would be, at most: every request of
   * the bands before it, its key's own, and of each other key as many as turns pass before the
   * new one's (one more than its key's own at most).
   */
  ahead(band: number, key: string): number {
    let n = 0;
    for (let b = 0; b < band; b++) n += this.#band(b).size;
    const own = this.count(band, key);
    n += own;
    for (const [other, queue] of this.#band(band).queues) {
      if (other !== key) n += Math.min(queue.length, own + 1);
    }
    return n;
  }

  /** Requests waiting in `band` and the bands served before it. */
  sizeUpTo(band: number): number {
    let n = 0;
    for (let b = 0; b <= band; b++) n += this.#band(b).size;
    return n;
  }

  /** The first band with requests waiting (the one `shift` serves), or -1 when empty. */
  firstBand(): number {
    return this.#bands.findIndex((b) => b.size > 0);
  }

  /** The last band with requests waiting (the least important), or -1 when empty. */
  lastBand(): number {
    for (let b = BANDS - 1; b >= 0; b--) if (this.#band(b).size > 0) return b;
    return -1;
  }

  /**
   * The key with the most requests waiting in `band`: the first in the ring among equals, or
   * with `strict`, none when several share the most.
   */
  longestKey(band: number, strict = false): string | undefined {
    let best: string | undefined;
    let most = 0;
    let tied = false;
    for (const key of this.#band(band).ring) {
      const n = this.count(band, key);
      if (n > most) {
        most = n;
        best = key;
        tied = false;
      } else if (n === most) {
        tied = true;
      }
    }
    return strict && tied ? undefined : best;
  }

  /** The newest request of `key` in `band`. */
  newest(band: number, key: string): T | undefined {
    return this.#band(band).queues.get(key)?.at(-1);
  }

  /** The request that has waited longest, whatever its band and key. */
  oldest(): T | undefined {
    let oldest: T | undefined;
    for (const band of this.#bands) {
      for (const queue of band.queues.values()) {
        const head = queue[0] as T;
        if (!oldest || head.since < oldest.since) oldest = head;
      }
    }
    return oldest;
  }

  /** Every request waiting, in no particular order. */
  all(): IterableIterator<T> {
    return this.#byId.values();
  }

  #band(band: number): Band<T> {
    const b = this.#bands[band];
    if (!b) throw new RangeError(`no priority band ${band}`);
    return b;
  }

  /** Test-only: the bands, rings and index agree. */
  checkInvariants(): void {
    let total = 0;
    for (const [b, band] of this.#bands.entries()) {
      let size = 0;
      if (band.ring.length !== band.queues.size) throw new Error(`band ${b}: ring != queues`);
      for (const key of band.ring) {
        const queue = band.queues.get(key);
        if (!queue || queue.length === 0) throw new Error(`band ${b}: empty queue ${key}`);
        for (const entry of queue) {
          if (entry.band !== b || entry.key !== key || this.#byId.get(entry.id) !== entry)
            throw new Error(`band ${b}: misfiled ${entry.id}`);
        }
        size += queue.length;
      }
      if (size !== band.size) throw new Error(`band ${b}: size ${band.size} != ${size}`);
      total += size;
    }
    if (total !== this.#byId.size) throw new Error(`index ${this.#byId.size} != ${total}`);
  }
}
