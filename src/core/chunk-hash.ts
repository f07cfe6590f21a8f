/**
 * Chained chunk hashes of canonical prompt bytes.
 *
 * hash[i] covers chunks 0..i (the chain is seeded with the model name), so one value names a
 * whole prefix, exactly like vLLM's block hashes: equal hash at depth i means equal prefix.
 * Only full chunks are hashed; the tail shorter than a chunk never counts, as engines only
 * cache full blocks.
 *
 * The hash is a non-cryptographic 4-lane multiply/xorshift over 32-bit little-endian words with
 * a murmur3-style cross-lane finaliser, truncated to 53 bits so it is a safe integer that
 * survives JSON, structured clone and SQLite. Synchronous and allocation-free on the hot path:
 * Web Crypto is async and has no fast non-cryptographic hash, and Workers forbid compiling WASM
 * at run time. A collision can only mis-route a request (never corrupt a response), so 53 bits
 * of a fast hash is the right trade; adversarial collisions are out of scope.
 *
 * Chunk size: 256 bytes by default, about 64 tokens of English BPE (~4 bytes per token). Finer
 * chunks cost index memory and hashing; coarser ones miss partial-message sharing. 64 tokens is
 * a multiple of vLLM's 16-token and SGLang's 1-token pages, and llm-d's precise scorer uses 64.
 */

/** Bytes per token used for estimates when no tokenizer is at hand (English BPE averages ~4). */
export const BYTES_PER_TOKEN = 4;
export const DEFAULT_CHUNK_BYTES = 256;

const M1 = 0x9e3779b1 | 0;
const M2 = 0x85ebca77 | 0;
const M3 = 0xc2b2ae3d | 0;
const M4 = 0x27d4eb2f | 0;
const TWO_POW_32 = 4294967296;
const MASK_21 = 0x1fffff;

function fmix32(x: number): number {
  let h = x ^ (x >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Hash of a string (UTF-16 code units), used to seed a chain, e.g. with the model name. */
export function seedHash(text: string): number {
  let a = 0x811c9dc5 | 0;
  let b = 0x01000193 | 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, M1);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, M2);
    b ^= b >>> 13;
  }
  return combine(a, b, a ^ M3, b ^ M4, text.length);
}

/** Cross-lane finaliser: every output bit depends on every lane. */
function combine(a0: number, b0: number, c0: number, d0: number, length: number): number {
  let a = (a0 ^ length) | 0;
  let b = b0 | 0;
  let c = c0 | 0;
  let d = d0 | 0;
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
  a = fmix32(a);
  b = fmix32(b);
  c = fmix32(c);
  d = fmix32(d);
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  return (((a ^ c) >>> 0) & MASK_21) * TWO_POW_32 + ((b ^ d) >>> 0);
}

/**
 * One link of the chain: the hash of `value` given the previous link. The simulator and the
 * trace loaders use it to turn abstract block ids into chunk hashes with the same chaining rule.
 */
export function chainHash(previous: number, value: number): number {
  const pLo = previous >>> 0;
  const pHi = (previous / TWO_POW_32) >>> 0;
  const vLo = value >>> 0;
  const vHi = (value / TWO_POW_32) >>> 0;
  const a = Math.imul(pLo ^ vLo, M1);
  const b = Math.imul(pHi ^ vHi, M2);
  return combine(a ^ (a >>> 15), b ^ (b >>> 13), Math.imul(vLo, M3), Math.imul(pHi ^ vLo, M4), 8);
}

/**
 * Chained hashes of every full chunk of `bytes`, the chain starting from `seed`.
 * `bytes.byteOffset` must be 4-aligned and `chunkBytes` a multiple of 16. Words are read in the
 * platform's byte order; every runtime the router targets (x86-64, arm64) is little-endian.
 *
 * With `into`, the hashes are appended to it and continue its chain: the first chunk of `bytes`
 * is chunk `into.length` of the prompt, chained on `into`'s last hash. So a prompt can be
 * hashed a buffer at a time with the same result as all at once (`prompt/chunk-writer.ts`).
 */
export function chunkHashes(
  bytes: Uint8Array,
  chunkBytes: number,
  seed: number,
  into: number[] = [],
): number[] {
  const chunks = Math.floor(bytes.length / chunkBytes);
  // A plain array: V8 allocates a Float64Array over 64 bytes outside the heap, which measured
  // ~2 us per call, more than hashing a 4 KB prompt.
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, (chunks * chunkBytes) >>> 2);
  const wordsPerChunk = chunkBytes >>> 2;
  const first = into.length;
  let previous = first > 0 ? (into[first - 1] as number) : seed;
  for (let k = first, w = 0; k < first + chunks; k++) {
    let a = (previous >>> 0) ^ M1;
    let b = ((previous / TWO_POW_32) >>> 0) ^ M2;
    let c = (previous >>> 0) ^ M3;
    let d = ((previous / TWO_POW_32) >>> 0) ^ M4;
    const end = w + wordsPerChunk;
    for (; w < end; w += 4) {
      a = Math.imul(a ^ (words[w] as number), M1);
      a ^= a >>> 15;
      b = Math.imul(b ^ (words[w + 1] as number), M2);
      b ^= b >>> 13;
      c = Math.imul(c ^ (words[w + 2] as number), M3);
      c ^= c >>> 16;
      d = Math.imul(d ^ (words[w + 3] as number), M4);
      d ^= d >>> 14;
    }
    previous = combine(a, b, c, d, k);
    into.push(previous);
  }
  return into;
}

/** Prompt tokens estimated from canonical bytes (no tokenizer at the edge). */
export function estimateTokens(byteLength: number): number {
  return Math.ceil(byteLength / BYTES_PER_TOKEN);
}
