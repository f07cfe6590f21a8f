/**
 * @module
 * Hash table of indices: maps a 53-bit hash value to the index `i` whose key `keys[i]` holds it,
 * for structs-of-arrays that keep their keys in a `Float64Array` of their own. The radix index
 * maps chunk hashes to chunks, the hot-prefix counter prefix hashes to counters, the simulator's
 * block cache block hashes to blocks.
 *
 * Open addressing with linear probing over an `Int32Array` of indices (-1 = empty); the key is
 * read from the caller's `keys`, so the table stores 4 bytes per slot and never a key. The
 * size is a power of two kept at load <= 0.5; deletion uses backward shift (Knuth, TAOCP
 * vol. 3, 6.4, Algorithm R), so there are no tombstones and probe lengths never degrade.
 * The slot is a multiplicative (Fibonacci) hash of the 53-bit value's two halves, so small or
 * structured hash values still spread. Lookups never throw and always terminate, whatever the
 * key (NaN included).
 *
 * The caller owns `keys` and passes it to every call: the table holds no reference, so the
 * caller may grow (replace) its arrays freely. An index's key must not change while the index
 * is in the table.
 */

const EMPTY = -1;
const TWO_32 = 4294967296;

export class HashTable {
  slots: Int32Array;
  mask: number;
  shift: number;
  count = 0;

  constructor(minEntries: number) {
    const size = tableSizeFor(minEntries);
    this.slots = new Int32Array(size).fill(EMPTY);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
  }

  /** Home slot of a hash value. Total for any number (NaN, negatives, fractions): never throws. */
  home(h: number): number {
    const lo = h >>> 0;
    const hi = ((h - lo) / TWO_32) | 0;
    return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> this.shift;
  }

  /** The index whose key is `h`, or -1. */
  find(h: number, keys: Float64Array): number {
    const slots = this.slots;
    const mask = this.mask;
    let i = this.home(h);
    for (;;) {
      const c = slots[i]!;
      if (c === EMPTY) return EMPTY;
      if (keys[c] === h) return c;
      i = (i + 1) & mask;
    }
  }

  /** Makes room for `entries` keys without passing load 0.5; rehashes from the old slots. */
  reserve(entries: number, keys: Float64Array): void {
    if (entries * 2 <= this.slots.length) return;
    const old = this.slots;
    const size = tableSizeFor(entries);
    this.slots = new Int32Array(size).fill(EMPTY);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
    for (let i = 0; i < old.length; i++) {
      const c = old[i]!;
      if (c !== EMPTY) this.#place(c, keys);
    }
  }

  /** Adds index `c` under its key `keys[c]` (`c` must not be present). */
  insert(c: number, keys: Float64Array): void {
    this.reserve(this.count + 1, keys);
    this.#place(c, keys);
    this.count++;
  }

  /** Removes index `c` (which must be present, under its key `keys[c]`) by backward shift. */
  remove(c: number, keys: Float64Array): void {
    const slots = this.slots;
    const mask = this.mask;
    let i = this.home(keys[c]!);
    while (slots[i] !== c) i = (i + 1) & mask;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const d = slots[j]!;
      if (d === EMPTY) break;
      const k = this.home(keys[d]!);
      // `d` may move back to the hole at `i` unless its home lies cyclically in (i, j].
      if (j > i ? k <= i || k > j : k <= i && k > j) {
        slots[i] = d;
        i = j;
      }
    }
    slots[i] = EMPTY;
    this.count--;
  }

  /** Empties the table, keeping its size. */
  clear(): void {
    this.slots.fill(EMPTY);
    this.count = 0;
  }

  /**
   * Throws an Error naming the first broken invariant: `count` equals the occupied slots, load
   * <= 0.5, no index is held twice, and every index is reachable from its key's home slot
   * without an empty slot between and is what its key finds. O(slots); for tests and
   * validation, never a hot path.
   */
  checkInvariants(keys: Float64Array): void {
    const slots = this.slots;
    const seen = new Uint8Array(keys.length);
    let occupied = 0;
    for (let i = 0; i < slots.length; i++) {
      const c = slots[i]!;
      if (c === EMPTY) continue;
      occupied++;
      if (c < 0 || c >= keys.length) throw new Error(`hash table slot ${i} holds index ${c}`);
      if (seen[c] === 1) throw new Error(`hash table holds index ${c} twice`);
      seen[c] = 1;
      for (let j = this.home(keys[c]!); j !== i; j = (j + 1) & this.mask) {
        if (slots[j] === EMPTY) throw new Error(`index ${c} unreachable from its home slot`);
      }
      if (this.find(keys[c]!, keys) !== c) throw new Error(`index ${c}'s key finds another`);
    }
    if (occupied !== this.count)
      throw new Error(`hash table holds ${occupied}, count ${this.count}`);
    if (this.count * 2 > slots.length) throw new Error("hash table load over 0.5");
  }

  #place(c: number, keys: Float64Array): void {
    const slots = this.slots;
    const mask = this.mask;
    let i = this.home(keys[c]!);
    while (slots[i] !== EMPTY) i = (i + 1) & mask;
    slots[i] = c;
  }
}

function tableSizeFor(entries: number): number {
  let size = 16;
  while (size < entries * 2) size *= 2;
  return size;
}
