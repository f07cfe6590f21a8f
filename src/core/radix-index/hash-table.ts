/**
 * Chunk hash table: maps every held chunk hash to its chunk index.
 *
 * Chained chunk hashes identify a whole prefix, so one global table answers "is depth i of this
 * request held?" in O(1) and lets `match` binary-search a request instead of walking the trie.
 * Open addressing with linear probing over an `Int32Array` of chunk indices (-1 = empty); the
 * key is read from the chunk's hash (`keys[c]`), so the table stores 4 bytes per slot. The size
 * is a power of two kept at load <= 0.5; deletion uses backward shift (Knuth, TAOCP vol. 3,
 * 6.4, Algorithm R), so there are no tombstones and probe lengths never degrade.
 * The slot is a multiplicative (Fibonacci) hash of the 53-bit value's two halves, so small or
 * structured hash values still spread. Lookups never throw and always terminate, whatever the key.
 */

const EMPTY = -1;
const TWO_32 = 4294967296;

export class ChunkTable {
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

  /** Chunk index holding hash `h`, or -1. */
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

  /** Adds chunk `c` (its hash must not be present). */
  insert(c: number, keys: Float64Array): void {
    this.reserve(this.count + 1, keys);
    this.#place(c, keys);
    this.count++;
  }

  /** Removes chunk `c` (which must be present) by backward-shift deletion. */
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
