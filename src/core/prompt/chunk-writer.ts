/**
 * Canonical prompt text -> chained chunk hashes, streamed through one fixed 64 KB buffer.
 *
 * The canonicaliser hands over text and token ids in order (`CanonicalSink`); they are encoded
 * as UTF-8 into the buffer, and whenever it fills every full chunk in it is hashed
 * (`chunkHashes` continues the chain) and only the tail shorter than a chunk is kept. Hashing
 * a prompt therefore costs O(bytes) time and no memory beyond the buffer and the hashes,
 * whatever its shape: the prompt is never one string or one byte array, and a token id goes in
 * as digits without becoming a string. The previous design collected one string per piece and
 * encoded them into a buffer of 3 bytes per UTF-16 unit: for a 16 MB prompt of token ids that
 * was 2.8 million strings and a 48 MB buffer.
 *
 * The bytes are TextEncoder's UTF-8 of each piece in turn: the same as encoding the
 * joined text, except that a surrogate pair split across two pieces (possible only with lone
 * `\uD8xx` escapes in JSON) is two U+FFFD. The buffer is shared by every call: hashing is
 * synchronous, so calls never interleave.
 */
import { chunkHashes } from "../chunk-hash.ts";
import type { CanonicalSink } from "./framing.ts";

const BUFFER_BYTES = 64 * 1024;
/**
 * Strings shorter than this are encoded here: `encodeInto` needs a view and returns an object,
 * about 150 bytes of garbage per call, more than such a string's own bytes.
 */
const SHORT = 256;
/** `encodeInto` writes at most 3 bytes per UTF-16 unit. */
const MAX_BYTES_PER_UNIT = 3;
/** A safe integer has at most 16 digits, then a comma. */
const MAX_TOKEN_ID_BYTES = 17;

const encoder = new TextEncoder();
const buffer = new Uint8Array(BUFFER_BYTES);

/** UTF-8 of a short string at `at` (room for 3 bytes per unit is the caller's); returns the end. */
function encodeShort(text: string, at: number): number {
  let end = at;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      buffer[end++] = c;
      continue;
    }
    if (c < 0x800) {
      buffer[end++] = 0xc0 | (c >> 6);
      buffer[end++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const point = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        buffer[end++] = 0xf0 | (point >> 18);
        buffer[end++] = 0x80 | ((point >> 12) & 0x3f);
        buffer[end++] = 0x80 | ((point >> 6) & 0x3f);
        buffer[end++] = 0x80 | (point & 0x3f);
        i++;
        continue;
      }
      c = 0xfffd; // a lone surrogate, as TextEncoder encodes it
    }
    buffer[end++] = 0xe0 | (c >> 12);
    buffer[end++] = 0x80 | ((c >> 6) & 0x3f);
    buffer[end++] = 0x80 | (c & 0x3f);
  }
  return end;
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

class ChunkWriter implements CanonicalSink {
  #chunkBytes = 0;
  #seed = 0;
  #hashes: number[] = [];
  /** Bytes waiting in the buffer. */
  #at = 0;
  /** Bytes already hashed and dropped. */
  #done = 0;

  start(chunkBytes: number, seed: number): void {
    this.#chunkBytes = chunkBytes;
    this.#seed = seed;
    this.#hashes = [];
    this.#at = 0;
    this.#done = 0;
  }

  /** Hash every full chunk in the buffer and keep the tail: frees all but < chunkBytes. */
  #flush(): void {
    const full = this.#at - (this.#at % this.#chunkBytes);
    if (full === 0) return;
    chunkHashes(buffer.subarray(0, full), this.#chunkBytes, this.#seed, this.#hashes);
    buffer.copyWithin(0, full, this.#at);
    this.#at -= full;
    this.#done += full;
  }

  text(value: string): void {
    const units = value.length;
    if (units < SHORT) {
      if (BUFFER_BYTES - this.#at < units * MAX_BYTES_PER_UNIT) this.#flush();
      this.#at = encodeShort(value, this.#at);
      return;
    }
    // Slices that surely fit, so `encodeInto` never has to stop early (runtimes differ in how
    // much of a long source they look at when it does).
    for (let from = 0; from < units; ) {
      if (BUFFER_BYTES - this.#at < SHORT * MAX_BYTES_PER_UNIT) this.#flush();
      let to = Math.min(units, from + Math.floor((BUFFER_BYTES - this.#at) / MAX_BYTES_PER_UNIT));
      // Never split a surrogate pair: each half alone would encode as U+FFFD.
      if (to < units && isHighSurrogate(value.charCodeAt(to - 1))) to--;
      const slice = from === 0 && to === units ? value : value.substring(from, to);
      this.#at += encoder.encodeInto(slice, buffer.subarray(this.#at)).written;
      from = to;
    }
  }

  tokenId(id: number): void {
    if (!(Number.isSafeInteger(id) && id >= 0)) {
      this.text(`${id},`); // not a token id the API allows; rendered as JavaScript would
      return;
    }
    if (BUFFER_BYTES - this.#at < MAX_TOKEN_ID_BYTES) this.#flush();
    const start = this.#at;
    let digits = 1;
    for (let bound = 10; bound <= id; bound *= 10) digits++;
    let at = start + digits;
    buffer[at] = 0x2c; // ","
    this.#at = at + 1;
    // Digits from the last: int32 arithmetic for every real vocabulary, doubles beyond.
    if (id <= 0x7fffffff) {
      for (let rest = id | 0; at > start; ) {
        const next = (rest / 10) | 0;
        buffer[--at] = 0x30 + rest - next * 10;
        rest = next;
      }
    } else {
      for (let rest = id; at > start; ) {
        const next = Math.floor(rest / 10);
        buffer[--at] = 0x30 + (rest - next * 10);
        rest = next;
      }
    }
  }

  finish(): { chunkHashes: number[]; byteLength: number } {
    this.#flush();
    return { chunkHashes: this.#hashes, byteLength: this.#done + this.#at };
  }
}

const writer = new ChunkWriter();

/**
 * Chained hashes of the canonical text that `write` produces, and its UTF-8 length.
 * `chunkBytes` must be a multiple of 16 and at most 8192 (settings enforce it).
 */
export function hashCanonical(
  write: (sink: CanonicalSink) => void,
  chunkBytes: number,
  seed: number,
): { chunkHashes: number[]; byteLength: number } {
  writer.start(chunkBytes, seed);
  write(writer);
  return writer.finish();
}
