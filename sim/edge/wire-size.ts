/**
 * The bytes Node's `v8.serialize` (V8's wire format, which Workers RPC carries) writes for a
 * value of the edge protocol's plain data, computed from the value alone. V8's own count depends
 * on how the engine happens to hold the value, which changes with the JIT's history: an array
 * an optimised `.map` built, or one a polymorphic keyed load transitioned, is holey and written
 * sparsely (a key before every element); an integer in a field V8 has widened to doubles (because
 * any object of the same shape, built before by any code, held a double there) is written as a
 * double, 9 bytes, not 2. Two replays of one seed in one process then differed by a few bytes per
 * sync. This writes what V8 writes for the same value built afresh: arrays packed (dense), an
 * integer in int32 range as a small integer, except in an array of numbers of which one is not
 * (V8 holds that array as doubles), strings one byte per character when every character fits,
 * else two; a Uint8Array as Node's serializer writes it (a host object: type, length, bytes).
 */

function varintBytes(n: number): number {
  let bytes = 1;
  for (let v = n >>> 0; v >= 0x80; v >>>= 7) bytes++;
  return bytes;
}

/** Within int32 and not -0: V8 holds it as a small integer (Smi on 64-bit Node). */
function isSmall(n: number): boolean {
  return Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 && !Object.is(n, -0);
}

function zigzag(n: number): number {
  return ((n << 1) ^ (n >> 31)) >>> 0;
}

function isIndex(key: string): boolean {
  const n = Number(key);
  return Number.isInteger(n) && n >= 0 && n < 2 ** 32 - 1 && String(n) === key;
}

class Sizer {
  /** The header: 0xff and the format's version (15). */
  bytes = 2;
  readonly #ids = new Map<object, number>();

  number(n: number): void {
    this.bytes += isSmall(n) ? 1 + varintBytes(zigzag(n)) : 9;
  }

  string(s: string): void {
    let oneByte = true;
    for (let i = 0; i < s.length && oneByte; i++) oneByte = s.charCodeAt(i) <= 0xff;
    const length = oneByte ? s.length : 2 * s.length;
    this.bytes += 1 + varintBytes(length) + length;
  }

  value(v: unknown): void {
    if (v === null || v === undefined || typeof v === "boolean") {
      this.bytes += 1;
    } else if (typeof v === "number") {
      this.number(v);
    } else if (typeof v === "string") {
      this.string(v);
    } else if (typeof v === "object") {
      this.#receiver(v);
    } else {
      throw new TypeError(`wire size: ${typeof v} is not plain data`);
    }
  }

  #receiver(o: object): void {
    const seen = this.#ids.get(o);
    if (seen !== undefined) {
      this.bytes += 1 + varintBytes(seen);
      return;
    }
    this.#ids.set(o, this.#ids.size);
    if (o instanceof Uint8Array) {
      // Node's DefaultSerializer: host-object tag, the view's type index (1), length, bytes.
      this.bytes += 2 + varintBytes(o.byteLength) + o.byteLength;
    } else if (Array.isArray(o)) {
      const doubles = o.every((x) => typeof x === "number") && !o.every(isSmall);
      this.bytes += 1 + varintBytes(o.length);
      for (const x of o) {
        if (doubles) this.bytes += 9;
        else this.value(x);
      }
      // End of the dense array: tag, properties (none), length.
      this.bytes += 1 + 1 + varintBytes(o.length);
    } else if (Object.getPrototypeOf(o) === Object.prototype) {
      const keys = Object.keys(o);
      this.bytes += 1;
      for (const key of keys) {
        if (isIndex(key)) this.number(Number(key));
        else this.string(key);
        this.value((o as Record<string, unknown>)[key]);
      }
      this.bytes += 1 + varintBytes(keys.length);
    } else {
      throw new TypeError(`wire size: ${o.constructor?.name ?? "object"} is not plain data`);
    }
  }
}

/** Bytes of `value` in V8's wire format as Node's `v8.serialize` writes it afresh. */
export function wireSize(value: unknown): number {
  const s = new Sizer();
  s.value(value);
  return s.bytes;
}
