/**
 * @module
 * The hottest prompt prefixes of a pool, for the dashboard: which shallow prefixes (the first
 * `depth` chunks: a system prompt, a tool list, a few-shot header) draw the most requests now.
 *
 * Algorithm: Space-Saving (Metwally, Agrawal, El Abbadi, "Efficient Computation of Frequent and
 * Top-k Elements in Data Streams", ICDT 2005) over time-decayed counts using forward decay
 * (Cormode, Shkapenyuk, Srivastava, Xu, "Forward Decay", ICDE 2009). A request whose prompt has
 * n chunks counts once for its prefix of min(depth, n) chunks, keyed by that prefix's chained
 * hash (which names the whole prefix). With all `capacity` counters taken, a new prefix replaces
 * the counter with the smallest count and inherits it as its error, so a prefix with more than
 * 1/capacity of the (decayed) traffic is always held, and each count over-estimates its true
 * value by at most its `error`. Forward decay weighs a request at time t by 2^((t - L)/h) for a
 * landmark L and half-life h, so old traffic fades without touching every counter on each
 * request; counts are divided by 2^((now - L)/h) when read, and rescaled (L moved to now) before
 * the weights could overflow. The decayed count is an exponentially weighted request count with
 * mean age h / ln 2, so count * ln 2 / h is a request rate.
 *
 * Why beside the index's node heat (`radix-index/heat.ts`, same half-life): node heat answers
 * "how hot is this request's prefix" at every depth on the routing path, but listing the
 * hottest would scan every node and lose what the index evicts; this answers "which prefixes are
 * hottest" from fixed memory.
 *
 * Complexity: `observe` O(1) for a held prefix (the core's `HashTable` from key hash to
 * counter), O(capacity) for a new one once full (a scan for the minimum, cheaper than a heap's
 * upkeep at this size); `top` O(capacity log capacity). Measured in Node 22 at capacity 64:
 * about 70-110 ns per request of a held prefix, 200-330 ns of a new one.
 * Memory: fixed, about capacity * (8 * depth + 41) bytes, no allocation per request.
 *
 * Options: `capacity` 1..4096 counters (default 64); `depth` 1..64 chunks (default 4, about 256
 * tokens at the default chunk size); `halfLifeMs` 1000..86400000 (default `HEAT_HALF_LIFE_MS`,
 * 60000).
 */

import { HashTable } from "../hash-table.ts";
import { HEAT_HALF_LIFE_MS } from "../radix-index/heat.ts";

export interface HotPrefixesOptions {
  capacity?: number;
  depth?: number;
  halfLifeMs?: number;
}

export interface HotPrefix {
  /** Chained hashes of the prefix's chunks (the last one names the whole prefix). */
  hashes: number[];
  /** Chunks in the prefix: `depth`, or fewer for prompts that short. */
  depth: number;
  /** Decayed request count (an over-estimate by at most `error`). */
  requests: number;
  error: number;
  /** Requests per second, exponentially weighted over about a half-life. */
  ratePerSecond: number;
}

/** Rescale before weights pass 2^32: far from float64's range, far from precision loss. */
const RESCALE_EXPONENT = 32;

function checkInt(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`HotPrefixes: ${field} ${value} must be an integer in ${min}..${max}`);
  }
  return value;
}

export class HotPrefixes {
  readonly capacity: number;
  readonly depth: number;
  readonly halfLifeMs: number;
  #paths: Float64Array;
  #depths: Uint8Array;
  #counts: Float64Array;
  #errors: Float64Array;
  /** Per counter, its key: the chained hash of its prefix's last chunk. */
  #keys: Float64Array;
  /** Key -> counter. */
  #table: HashTable;
  #size = 0;
  #landmark: number | null = null;

  constructor({
    capacity = 64,
    depth = 4,
    halfLifeMs = HEAT_HALF_LIFE_MS,
  }: HotPrefixesOptions = {}) {
    this.capacity = checkInt("capacity", capacity, 1, 4096);
    this.depth = checkInt("depth", depth, 1, 64);
    this.halfLifeMs = checkInt("halfLifeMs", halfLifeMs, 1000, 86_400_000);
    this.#paths = new Float64Array(capacity * depth);
    this.#depths = new Uint8Array(capacity);
    this.#counts = new Float64Array(capacity);
    this.#errors = new Float64Array(capacity);
    this.#keys = new Float64Array(capacity);
    this.#table = new HashTable(capacity);
  }

  /** Prefixes held (at most `capacity`). */
  get size(): number {
    return this.#size;
  }

  /** Count one request with these chained chunk hashes at time `now` (ms). */
  observe(hashes: ArrayLike<number>, now: number): void {
    const depth = Math.min(this.depth, hashes.length);
    if (depth === 0) return;
    const weight = this.#weight(now);
    const key = hashes[depth - 1] as number;
    const held = this.#table.find(key, this.#keys);
    if (held >= 0) {
      this.#counts[held] = (this.#counts[held] as number) + weight;
      return;
    }
    let slot: number;
    let base = 0;
    if (this.#size < this.capacity) {
      slot = this.#size++;
    } else {
      slot = this.#minSlot();
      base = this.#counts[slot] as number;
      this.#table.remove(slot, this.#keys);
    }
    const at = slot * this.depth;
    for (let i = 0; i < depth; i++) this.#paths[at + i] = hashes[i] as number;
    this.#depths[slot] = depth;
    this.#counts[slot] = base + weight;
    this.#errors[slot] = base;
    this.#keys[slot] = key;
    this.#table.insert(slot, this.#keys);
  }

  /** The `n` prefixes with the highest counts, highest first, as of `now`. */
  top(n: number, now: number): HotPrefix[] {
    const scale = this.#landmark === null ? 1 : 2 ** ((now - this.#landmark) / this.halfLifeMs);
    const perSecond = Math.LN2 / (this.halfLifeMs / 1000);
    const slots = Array.from({ length: this.#size }, (_, i) => i);
    slots.sort((a, b) => (this.#counts[b] as number) - (this.#counts[a] as number));
    return slots.slice(0, Math.max(0, n)).map((slot) => {
      const depth = this.#depths[slot] as number;
      const at = slot * this.depth;
      const requests = (this.#counts[slot] as number) / scale;
      return {
        hashes: Array.from(this.#paths.subarray(at, at + depth)),
        depth,
        requests,
        error: (this.#errors[slot] as number) / scale,
        ratePerSecond: requests * perSecond,
      };
    });
  }

  clear(): void {
    this.#table.clear();
    this.#size = 0;
    this.#landmark = null;
  }

  /** Test-only: the table is sound and holds exactly the counters in use, each under its key. */
  checkInvariants(): void {
    this.#table.checkInvariants(this.#keys);
    const size = this.#size;
    if (this.#table.count !== size)
      throw new Error(`table holds ${this.#table.count}, size ${size}`);
    for (let slot = 0; slot < size; slot++) {
      const depth = this.#depths[slot] as number;
      if (this.#keys[slot] !== this.#paths[slot * this.depth + depth - 1]) {
        throw new Error(`slot ${slot}'s key is not its prefix's last hash`);
      }
      if (this.#table.find(this.#keys[slot] as number, this.#keys) !== slot) {
        throw new Error(`slot ${slot} not found`);
      }
    }
  }

  #minSlot(): number {
    const counts = this.#counts;
    let best = 0;
    for (let i = 1; i < this.#size; i++) {
      if ((counts[i] as number) < (counts[best] as number)) best = i;
    }
    return best;
  }

  /** The forward-decay weight of a request at `now`, rescaling the counts first if needed. */
  #weight(now: number): number {
    if (this.#landmark === null) this.#landmark = now;
    const exponent = (now - this.#landmark) / this.halfLifeMs;
    if (exponent <= RESCALE_EXPONENT) return 2 ** exponent;
    const factor = 2 ** exponent;
    for (let i = 0; i < this.#size; i++) {
      this.#counts[i] = (this.#counts[i] as number) / factor;
      this.#errors[i] = (this.#errors[i] as number) / factor;
    }
    this.#landmark = now;
    return 1;
  }
}
