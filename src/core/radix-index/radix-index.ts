/**
 * @module
 * The radix index: which origins hold which prompt prefixes in their KV cache.
 *
 * Requests arrive as chained chunk hashes (`hashes[i]` covers chunks 0..i, like vLLM's block
 * hashes, so one value names a whole prefix). The index is a compressed trie over those chunks
 * in typed arrays (`store.ts`), plus a global hash -> chunk table (the core's `hash-table.ts`).
 *
 * Semantics (chunk level; the property tests pin them against
 * `test-support/radix-reference-model.ts`):
 * - Ownership is prefix-closed, and a chunk exists iff some origin holds it.
 * - Each origin has an LRU list of its chunks. An insert touches the whole path, moving its
 *   chunks to the recent end deepest first, so an origin's oldest chunk is always a leaf for it.
 * - Capacity: after an insert or `setCapacity`, the origin loses its oldest chunks until
 *   owned <= capacity. Budget: then, while distinct chunks > maxChunks, the origin whose oldest
 *   chunk has the smallest `now` (ties: lowest slot) loses that chunk.
 * Node-level entries implement this exactly because an insert splits nodes so that it touches
 * whole nodes (`split-node.ts`); eviction trims entries from their deep end (`evict.ts`).
 *
 * A request holds a prefix only if every hash of it matches the path's labels: `match` and
 * `insert` verify the binary search's answer (`path.ts`), so a 53-bit collision or an unchained
 * request never borrows another prefix's ownership, and an insert stops at a hash already held
 * elsewhere (collision guard) rather than corrupt the trie.
 *
 * Complexity for a request of n chunks matching d of them on a path of p nodes, e entries per
 * node: `match` O(log n + d + p*e), no allocation; `insert` O(n + k + p*e) plus eviction, for a
 * split of k chunks, no allocation beyond the returned evictions and amortised array growth.
 * Eviction costs O(e + node length) per entry it trims; budget eviction also scans the
 * origins that own anything, once per entry it trims.
 *
 * Options: `maxOrigins` 1..65535 (slots 0..maxOrigins-1); `maxChunks` >= 1 or Infinity (distinct
 * chunks held; an insert may pass it transiently by its own new chunks before evicting);
 * `initialChunks` 0..2^28, default 1024 (typed-array capacity hint).
 */

import { type Eviction, EvictionLog, evictToBudget, evictToCapacity } from "./evict.ts";
import { HEAT_HALF_LIFE_MS, heatOf } from "./heat.ts";
import { fromImage, toImage } from "./image.ts";
import { checkInvariants } from "./invariants.ts";
import { appendRun, deepestHeld, touchPath } from "./path.ts";
import { decodeSnapshot, encodeSnapshot, isCount } from "./snapshot.ts";
import { splitNode } from "./split-node.ts";
import { NONE, RadixStore, ROOT } from "./store.ts";
import { trimEntry } from "./trim-entry.ts";
import { truncateAt } from "./truncate.ts";

export interface RadixIndexOptions {
  /** Origin slots 0..maxOrigins-1; 1..65535. */
  maxOrigins: number;
  /** Global budget of distinct chunks held (the memory bound); >= 1, or Infinity. */
  maxChunks: number;
  /** Initial typed-array capacity in chunks; 0..2^28, default 1024. */
  initialChunks?: number;
  /** Half-life of node heat (heat.ts) in the caller's clock units; > 0, default 60,000 ms. */
  heatHalfLifeMs?: number;
}

export interface RadixIndexStats {
  chunks: number;
  nodes: number;
  /** Sum over origins of owned chunks. */
  ownerships: number;
  entries: number;
  /** Bytes allocated in typed arrays (capacity, not just use). */
  bytes: number;
  /** Origins with a finite capacity or owning chunks, ascending. */
  perOrigin: { origin: number; owned: number; capacity: number }[];
}

const MAX_ORIGINS = 65535;
const MAX_INITIAL_CHUNKS = 2 ** 28;

export class RadixIndex {
  readonly #s: RadixStore;
  readonly #maxChunks: number;
  readonly #log: EvictionLog;
  readonly #halfLife: number;
  /** Out-parameter of `deepestHeld`, reused so lookups do not allocate. */
  readonly #at = new Int32Array(1);

  constructor(options: RadixIndexOptions) {
    if (typeof options !== "object" || options === null) {
      throw new RangeError("RadixIndex options must be an object");
    }
    const {
      maxOrigins,
      maxChunks,
      initialChunks = 1024,
      heatHalfLifeMs = HEAT_HALF_LIFE_MS,
    } = options;
    if (!Number.isInteger(maxOrigins) || maxOrigins < 1 || maxOrigins > MAX_ORIGINS) {
      throw new RangeError(
        `maxOrigins must be an integer in [1, ${MAX_ORIGINS}], got ${maxOrigins}`,
      );
    }
    if (!isCount(maxChunks) || maxChunks < 1) {
      throw new RangeError(`maxChunks must be an integer >= 1 or Infinity, got ${maxChunks}`);
    }
    if (
      !Number.isInteger(initialChunks) ||
      initialChunks < 0 ||
      initialChunks > MAX_INITIAL_CHUNKS
    ) {
      throw new RangeError(
        `initialChunks must be an integer in [0, 2^28], got ${String(initialChunks)}`,
      );
    }
    if (!(heatHalfLifeMs > 0) || !Number.isFinite(heatHalfLifeMs)) {
      throw new RangeError(`heatHalfLifeMs must be a finite number > 0, got ${heatHalfLifeMs}`);
    }
    this.#s = new RadixStore(maxOrigins, initialChunks);
    this.#maxChunks = maxChunks;
    this.#halfLife = heatHalfLifeMs;
    this.#log = new EvictionLog(maxOrigins);
  }

  /** Sets `origin`'s capacity in chunks (default Infinity) and evicts down to it now. */
  setCapacity(origin: number, chunks: number): readonly Eviction[] {
    this.#checkOrigin(origin);
    if (!isCount(chunks)) {
      throw new RangeError(`capacity chunks must be an integer >= 0 or Infinity, got ${chunks}`);
    }
    this.#s.capacity[origin] = chunks;
    evictToCapacity(this.#s, origin, this.#log);
    return this.#log.drain();
  }

  capacity(origin: number): number {
    this.#checkOrigin(origin);
    return this.#s.capacity[origin]!;
  }

  owned(origin: number): number {
    this.#checkOrigin(origin);
    return this.#s.owned[origin]!;
  }

  /**
   * Sets `out[o]` to how many leading chunks of `hashes` origin o holds (0 if none) for every
   * o < out.length, and returns the longest. A pure read; never throws on any `hashes`.
   */
  match(hashes: ArrayLike<number>, out: Int32Array): number {
    out.fill(0);
    const s = this.#s;
    const best = deepestHeld(s, hashes, hashes.length, this.#at);
    if (best < 0) return 0;
    const depth = best + 1;
    const limit = out.length;
    const parents = s.nodeParent;
    const starts = s.nodeStart;
    const firstEntry = s.nodeFirstEntry;
    const nextEntry = s.entryNextInNode;
    const origins = s.entryOrigin;
    const lens = s.entryLen;
    // Deepest node first, so the first entry seen for an origin is its deepest.
    for (let node = s.chunkNode[this.#at[0]!]!; node !== ROOT; node = parents[node]!) {
      const start = starts[node]!;
      for (let e = firstEntry[node]!; e !== NONE; e = nextEntry[e]!) {
        const o = origins[e]!;
        if (o < limit && out[o] === 0) {
          const d = start + lens[e]!;
          out[o] = Math.min(d, depth);
        }
      }
    }
    return depth;
  }

  /**
   * How many leading chunks of `hashes` are hot: held, and on nodes at least `minHeat` requests
   * went through lately (heat.ts). Because heat never grows with depth, that is a prefix of the
   * held path. A pure read; never throws on any `hashes`.
   */
  hotDepth(hashes: ArrayLike<number>, now: number, minHeat: number): number {
    const s = this.#s;
    const best = deepestHeld(s, hashes, hashes.length, this.#at);
    if (best < 0) return 0;
    for (let node = s.chunkNode[this.#at[0]!]!; node !== ROOT; node = s.nodeParent[node]!) {
      if (heatOf(s, node, now, this.#halfLife) >= minHeat) {
        return Math.min(best + 1, s.nodeStart[node]! + s.nodeLen[node]!);
      }
    }
    return 0;
  }

  /**
   * How many leading chunks of `hashes` different prompts share: the end of the deepest node on
   * the held path that branches (two or more children: prompts diverged there) and is hot (at
   * least `minHeat` requests through it lately). A system prompt under many conversations ends
   * at such a node; one conversation's own turns extend each other without branching, so its
   * private prefix never counts however often it is used. 0 when no such node is on the path.
   * A pure read; never throws on any `hashes`.
   */
  sharedDepth(hashes: ArrayLike<number>, now: number, minHeat: number): number {
    const s = this.#s;
    const best = deepestHeld(s, hashes, hashes.length, this.#at);
    if (best < 0) return 0;
    for (let node = s.chunkNode[this.#at[0]!]!; node !== ROOT; node = s.nodeParent[node]!) {
      const child = s.nodeFirstChild[node]!;
      const branches = child !== NONE && s.nodeNextSibling[child] !== NONE;
      if (branches && heatOf(s, node, now, this.#halfLife) >= minHeat) {
        return Math.min(best + 1, s.nodeStart[node]! + s.nodeLen[node]!);
      }
    }
    return 0;
  }

  /**
   * `origin` now holds all of `hashes` (every prefix of it), touched at logical time `now`;
   * then evicts to its capacity and to the global budget. Returns the evictions per origin.
   * Stops early, without error, at a hash already held elsewhere (collision guard). `warm`
   * false: no request went through the path (an ownership fact only): its heat stays.
   */
  insert(hashes: ArrayLike<number>, origin: number, now: number, warm = true): readonly Eviction[] {
    this.#checkOrigin(origin);
    if (typeof now !== "number" || Number.isNaN(now)) {
      throw new RangeError(`now must be a number (logical clock), got ${now}`);
    }
    const s = this.#s;
    const best = deepestHeld(s, hashes, hashes.length, this.#at);
    for (let i = best + 1; i < hashes.length; i++) {
      const h = hashes[i]!;
      if (!Number.isSafeInteger(h) || h < 0) {
        throw new RangeError(`hashes[${i}] must be an integer in [0, 2^53), got ${h}`);
      }
    }
    let tip = ROOT;
    if (best >= 0) {
      const c = this.#at[0]!;
      tip = s.chunkNode[c]!;
      const k = best - s.nodeStart[tip]! + 1;
      if (k < s.nodeLen[tip]!) tip = splitNode(s, tip, k);
    }
    if (best + 1 < hashes.length) tip = appendRun(s, tip, hashes, best + 1);
    if (tip === ROOT) return this.#log.drain();
    touchPath(s, tip, origin, now, this.#halfLife, warm);
    evictToCapacity(s, origin, this.#log);
    evictToBudget(s, this.#maxChunks, this.#log);
    return this.#log.drain();
  }

  /**
   * `origin` no longer holds `hashes[keep..]`: drops its chunk at depth `keep` on this path and
   * everything it holds below it. Returns chunks of ownership removed; keep >= length is a no-op.
   */
  truncate(hashes: ArrayLike<number>, origin: number, keep: number): number {
    this.#checkOrigin(origin);
    if (!Number.isSafeInteger(keep) || keep < 0) {
      throw new RangeError(`keep must be an integer >= 0, got ${keep}`);
    }
    if (keep >= hashes.length) return 0;
    const s = this.#s;
    if (deepestHeld(s, hashes, keep + 1, this.#at) < keep) return 0;
    const node = s.chunkNode[this.#at[0]!]!;
    return truncateAt(s, node, keep - s.nodeStart[node]!, origin);
  }

  /**
   * The chained hashes from the root down to the chunk named `hash`: the whole prefix it names,
   * or null when no origin holds it. O(depth). Lets an engine's "stored after `parent`" event,
   * which names only the parent, become an insert of the full path (router/index-feed.ts).
   * Built by appending from the root, so the array is packed: a holey one (`new Array(n)`) is
   * written sparsely by V8's serializer (Workers RPC) and, once a keyed load had seen one, made
   * the packed arrays read there holey too, so sync sizes depended on the JIT's history.
   */
  pathOf(hash: number): number[] | null {
    const s = this.#s;
    const c = s.table.find(hash, s.chunkHash);
    if (c === NONE) return null;
    const nodes: number[] = [];
    for (let node = s.chunkNode[c]!; node !== ROOT; node = s.nodeParent[node]!) nodes.push(node);
    const path: number[] = [];
    for (let k = nodes.length - 1; k >= 0; k--) {
      const node = nodes[k]!;
      // A node's label runs to its child's start; the deepest node's to the chunk itself.
      const end = k > 0 ? s.nodeStart[nodes[k - 1]!]! - 1 : s.chunkDepth[c]!;
      let x = s.nodeFirstChunk[node]!;
      for (let d = s.nodeStart[node]!; d <= end; d++, x = s.chunkNextInLabel[x]!) {
        path.push(s.chunkHash[x]!);
      }
    }
    return path;
  }

  /**
   * `origin` no longer holds the chunk named `hash`, nor anything it holds below it (ownership
   * stays prefix-closed). Returns chunks of ownership removed; 0 when it did not hold it. One
   * table lookup and the truncation: an engine eviction event costs no path walk.
   */
  dropFrom(hash: number, origin: number): number {
    this.#checkOrigin(origin);
    const s = this.#s;
    const c = s.table.find(hash, s.chunkHash);
    if (c === NONE) return 0;
    const node = s.chunkNode[c]!;
    return truncateAt(s, node, s.chunkDepth[c]! - s.nodeStart[node]!, origin);
  }

  /** Drops all of `origin`'s ownership (e.g. an engine cache reset); its capacity stays. */
  removeOrigin(origin: number): number {
    this.#checkOrigin(origin);
    const s = this.#s;
    let removed = 0;
    // The LRU head is always a leaf for its origin, so trimming from the head stays valid.
    for (let e = s.lruHead[origin]!; e !== NONE; e = s.lruHead[origin]!) {
      const len = s.entryLen[e]!;
      removed += len;
      trimEntry(s, e, len);
    }
    return removed;
  }

  /** Plain bytes (see `snapshot.ts` for the layout) that `restore` turns back into this index. */
  snapshot(): Uint8Array {
    return encodeSnapshot(toImage(this.#s, this.#maxChunks));
  }

  /**
   * Rebuilds an index from `snapshot()` bytes: same matches, owned counts, capacities and future
   * eviction order. `options` override the stored ones; a lower `maxChunks` is enforced at once
   * by budget eviction (not reported). Throws an Error on corrupt, truncated or unknown input.
   */
  static restore(bytes: Uint8Array, options?: Partial<RadixIndexOptions>): RadixIndex {
    const img = decodeSnapshot(bytes);
    const index = new RadixIndex({
      maxOrigins: options?.maxOrigins ?? img.maxOrigins,
      maxChunks: options?.maxChunks ?? img.maxChunks,
      initialChunks: Math.max(options?.initialChunks ?? 0, img.hashes.length),
      heatHalfLifeMs: options?.heatHalfLifeMs ?? HEAT_HALF_LIFE_MS,
    });
    fromImage(img, index.#s);
    evictToBudget(index.#s, index.#maxChunks, index.#log);
    index.#log.drain();
    return index;
  }

  stats(): RadixIndexStats {
    const s = this.#s;
    const perOrigin: RadixIndexStats["perOrigin"] = [];
    for (let o = 0; o < s.maxOrigins; o++) {
      const owned = s.owned[o]!;
      const capacity = s.capacity[o]!;
      if (owned > 0 || capacity !== Number.POSITIVE_INFINITY)
        perOrigin.push({ origin: o, owned, capacity });
    }
    return {
      chunks: s.chunks,
      nodes: s.nodes,
      ownerships: s.ownerships,
      entries: s.entries,
      bytes: s.bytes(),
      perOrigin,
    };
  }

  /**
   * Throws an Error describing the first broken structural invariant (`invariants.ts`, the same
   * check `restore` runs on every rebuilt snapshot). O(size): for tests, never a hot path.
   */
  checkInvariants(): void {
    checkInvariants(this.#s, this.#maxChunks);
  }

  #checkOrigin(origin: number): void {
    if (!Number.isInteger(origin) || origin < 0 || origin >= this.#s.maxOrigins) {
      throw new RangeError(
        `origin must be an integer in [0, ${this.#s.maxOrigins - 1}], got ${origin}`,
      );
    }
  }
}
