/**
 * Snapshot byte format of the radix index: plain bytes, little-endian, versioned, CRC-guarded.
 *
 * This file owns the format only: it turns an `IndexImage` (the index flattened into typed
 * arrays, see `image.ts`) into bytes and back, and rejects anything malformed with an Error
 * that says what is wrong. Checks that need the rebuilt structure (duplicate hashes, prefix
 * closure, one entry per origin and node) run after the rebuild, in `image.ts`.
 *
 * Layout, version 1 (u32/i32/f64 little-endian, no padding):
 *   header, 48 bytes: magic "RDXI" | version u32 | total byte length u32 | maxOrigins u32 |
 *     maxChunks f64 | nodes u32 | chunks u32 | entries u32 | lruOrigins u32 | capacities u32 |
 *     reserved u32 (0)
 *   nodes, in pre-order, children in sibling order: parent i32 (position in this list, -1 for
 *     the root) | length u32
 *   chunk hashes f64, every node's label in node order
 *   LRU origins, ascending: origin u32 | entry count u32
 *   entries, each origin's in LRU order (least recent first): node u32 | length u32 | lastUse f64
 *   capacities (finite only), ascending: origin u32 | capacity f64
 *   CRC-32 u32 of every byte before it
 */

import { crc32 } from "./crc32.ts";

export const SNAPSHOT_VERSION = 1;
const MAGIC = 0x49584452; // "RDXI" read as a little-endian u32
const HEADER = 48;
const MAX_ORIGINS = 65535;

/** The index flattened: what a snapshot stores. */
export interface IndexImage {
  maxOrigins: number;
  maxChunks: number;
  /** Per node in pre-order: its parent's position in that order, or -1 under the root. */
  nodeParent: Int32Array;
  nodeLen: Int32Array;
  /** All node labels concatenated in node order. */
  hashes: Float64Array;
  /** Origins owning anything, ascending, with their entry counts. */
  lruOrigin: Int32Array;
  lruCount: Int32Array;
  /** Entries grouped by origin (in `lruOrigin` order), each group least recently used first. */
  entryNode: Int32Array;
  entryLen: Int32Array;
  entryLastUse: Float64Array;
  /** Origins with a finite capacity, ascending. */
  capOrigin: Int32Array;
  capValue: Float64Array;
}

function byteLength(nodes: number, chunks: number, lru: number, entries: number, caps: number) {
  return HEADER + 8 * nodes + 8 * chunks + 8 * lru + 16 * entries + 12 * caps + 4;
}

export function encodeSnapshot(img: IndexImage): Uint8Array {
  const nodes = img.nodeParent.length;
  const chunks = img.hashes.length;
  const lru = img.lruOrigin.length;
  const entries = img.entryNode.length;
  const caps = img.capOrigin.length;
  const size = byteLength(nodes, chunks, lru, entries, caps);
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, MAGIC, true);
  v.setUint32(4, SNAPSHOT_VERSION, true);
  v.setUint32(8, size, true);
  v.setUint32(12, img.maxOrigins, true);
  v.setFloat64(16, img.maxChunks, true);
  v.setUint32(24, nodes, true);
  v.setUint32(28, chunks, true);
  v.setUint32(32, entries, true);
  v.setUint32(36, lru, true);
  v.setUint32(40, caps, true);
  let p = HEADER;
  for (let i = 0; i < nodes; i++, p += 8) {
    v.setInt32(p, img.nodeParent[i]!, true);
    v.setUint32(p + 4, img.nodeLen[i]!, true);
  }
  for (let i = 0; i < chunks; i++, p += 8) v.setFloat64(p, img.hashes[i]!, true);
  for (let i = 0; i < lru; i++, p += 8) {
    v.setUint32(p, img.lruOrigin[i]!, true);
    v.setUint32(p + 4, img.lruCount[i]!, true);
  }
  for (let i = 0; i < entries; i++, p += 16) {
    v.setUint32(p, img.entryNode[i]!, true);
    v.setUint32(p + 4, img.entryLen[i]!, true);
    v.setFloat64(p + 8, img.entryLastUse[i]!, true);
  }
  for (let i = 0; i < caps; i++, p += 12) {
    v.setUint32(p, img.capOrigin[i]!, true);
    v.setFloat64(p + 4, img.capValue[i]!, true);
  }
  v.setUint32(p, crc32(bytes, 0, p), true);
  return bytes;
}

export function decodeSnapshot(bytes: Uint8Array): IndexImage {
  const bad = (msg: string): never => {
    throw new Error(`invalid radix index snapshot: ${msg}`);
  };
  if (!(bytes instanceof Uint8Array)) bad("expected a Uint8Array");
  if (bytes.length < HEADER + 4)
    bad(`truncated: ${bytes.length} bytes, header needs ${HEADER + 4}`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, true) !== MAGIC) bad("wrong magic (not a radix index snapshot)");
  const version = v.getUint32(4, true);
  if (version !== SNAPSHOT_VERSION) {
    bad(`unsupported version ${version} (this build reads ${SNAPSHOT_VERSION})`);
  }
  const size = v.getUint32(8, true);
  if (size !== bytes.length)
    bad(`length field says ${size} bytes, got ${bytes.length} (truncated?)`);
  const end = size - 4;
  if (crc32(bytes, 0, end) !== v.getUint32(end, true)) bad("checksum mismatch (corrupt bytes)");

  const maxOrigins = v.getUint32(12, true);
  const maxChunks = v.getFloat64(16, true);
  const nodes = v.getUint32(24, true);
  const chunks = v.getUint32(28, true);
  const entries = v.getUint32(32, true);
  const lru = v.getUint32(36, true);
  const caps = v.getUint32(40, true);
  if (maxOrigins < 1 || maxOrigins > MAX_ORIGINS) bad(`maxOrigins ${maxOrigins} out of range`);
  if (!isCount(maxChunks) || maxChunks < 1) bad(`maxChunks ${maxChunks} invalid`);
  if (v.getUint32(44, true) !== 0) bad("reserved header field is not 0");
  if (byteLength(nodes, chunks, lru, entries, caps) !== size) bad("section sizes disagree");

  const img: IndexImage = {
    maxOrigins,
    maxChunks,
    nodeParent: new Int32Array(nodes),
    nodeLen: new Int32Array(nodes),
    hashes: new Float64Array(chunks),
    lruOrigin: new Int32Array(lru),
    lruCount: new Int32Array(lru),
    entryNode: new Int32Array(entries),
    entryLen: new Int32Array(entries),
    entryLastUse: new Float64Array(entries),
    capOrigin: new Int32Array(caps),
    capValue: new Float64Array(caps),
  };
  let p = HEADER;
  let labels = 0;
  for (let i = 0; i < nodes; i++, p += 8) {
    const parent = v.getInt32(p, true);
    const len = v.getUint32(p + 4, true);
    if (parent < -1 || parent >= i) bad(`node ${i} has parent ${parent}, not an earlier node`);
    if (len < 1 || len > chunks) bad(`node ${i} has length ${len}`);
    img.nodeParent[i] = parent;
    img.nodeLen[i] = len;
    labels += len;
  }
  if (labels !== chunks) bad(`node lengths sum to ${labels}, expected ${chunks} chunks`);
  for (let i = 0; i < chunks; i++, p += 8) {
    const h = v.getFloat64(p, true);
    if (!Number.isSafeInteger(h) || h < 0) bad(`chunk ${i} has hash ${h}, not in [0, 2^53)`);
    img.hashes[i] = h;
  }
  let listed = 0;
  for (let i = 0; i < lru; i++, p += 8) {
    const origin = v.getUint32(p, true);
    const count = v.getUint32(p + 4, true);
    if (origin >= maxOrigins) bad(`LRU origin ${origin} >= maxOrigins ${maxOrigins}`);
    if (i > 0 && origin <= img.lruOrigin[i - 1]!) bad("LRU origins not ascending");
    if (count < 1 || count > entries) bad(`origin ${origin} has ${count} entries`);
    img.lruOrigin[i] = origin;
    img.lruCount[i] = count;
    listed += count;
  }
  if (listed !== entries) bad(`LRU lists hold ${listed} entries, expected ${entries}`);
  for (let i = 0; i < entries; i++, p += 16) {
    const node = v.getUint32(p, true);
    const len = v.getUint32(p + 4, true);
    const use = v.getFloat64(p + 8, true);
    if (node >= nodes) bad(`entry ${i} names node ${node} of ${nodes}`);
    if (len < 1 || len > img.nodeLen[node]!) bad(`entry ${i} owns ${len} chunks of node ${node}`);
    if (Number.isNaN(use)) bad(`entry ${i} has a NaN lastUse`);
    img.entryNode[i] = node;
    img.entryLen[i] = len;
    img.entryLastUse[i] = use;
  }
  for (let i = 0; i < caps; i++, p += 12) {
    const origin = v.getUint32(p, true);
    const cap = v.getFloat64(p + 4, true);
    if (origin >= maxOrigins) bad(`capacity origin ${origin} >= maxOrigins ${maxOrigins}`);
    if (i > 0 && origin <= img.capOrigin[i - 1]!) bad("capacity origins not ascending");
    if (!Number.isSafeInteger(cap) || cap < 0) bad(`origin ${origin} has capacity ${cap}`);
    img.capOrigin[i] = origin;
    img.capValue[i] = cap;
  }
  return img;
}

/** A non-negative safe integer or +Infinity. */
export function isCount(x: number): boolean {
  return x === Number.POSITIVE_INFINITY || (Number.isSafeInteger(x) && x >= 0);
}
