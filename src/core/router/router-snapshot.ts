/**
 * Byte format of a router snapshot: a small JSON header (format version, chunk size, which origin
 * id owns which index slot, learned capacities and prefill speeds, bytes per token) followed by the radix index's own bytes.
 *   magic "LERS" | u32 header length | header (UTF-8 JSON) | index bytes
 * The header is tiny beside the index, so JSON costs nothing and stays readable in a hex dump.
 */
import type { LearnedBytesPerToken } from "./bytes-per-token.ts";
import type { RouterParts } from "./router-parts.ts";
import type { LearnedSpeed } from "./speed-learner.ts";

const MAGIC = 0x5352454c; // "LERS" little-endian
const VERSION = 1;

export interface SnapshotSlot {
  slot: number;
  id: string;
  reportedTokens: number | null;
  configuredChunks: number;
  effectiveChunks: number;
  /** Learned prefill speed (speed-learner.ts); absent in snapshots from before it existed. */
  speed?: LearnedSpeed;
}

export interface SnapshotHeader {
  chunkBytes: number;
  slots: SnapshotSlot[];
  /** The pool's learned bytes per token (bytes-per-token.ts); absent in older snapshots. */
  bytesPerToken?: LearnedBytesPerToken;
}

/** A router's snapshot: its index and what reads it back (origin ids by slot, what it learned). */
export function snapshotOf(parts: RouterParts): Uint8Array {
  const { slots, capacity, speeds, pool, bytesPerToken, claims } = parts;
  const saved = slots.order.map((slot) => ({
    slot,
    id: slots.at(slot).settings.id,
    ...capacity.saved(slot),
    speed: speeds.saved(slot),
  }));
  const header = {
    chunkBytes: pool.chunkBytes,
    slots: saved,
    bytesPerToken: bytesPerToken.saved(),
  };
  return encodeSnapshot(header, claims.snapshot());
}

export function encodeSnapshot(header: SnapshotHeader, index: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify({ v: VERSION, ...header }));
  const out = new Uint8Array(8 + json.length + index.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, json.length, true);
  out.set(json, 8);
  out.set(index, 8 + json.length);
  return out;
}

export function decodeSnapshot(bytes: Uint8Array): { header: SnapshotHeader; index: Uint8Array } {
  if (bytes.length < 8) throw new Error("router snapshot: truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new Error("router snapshot: bad magic");
  const length = view.getUint32(4, true);
  if (8 + length > bytes.length) throw new Error("router snapshot: truncated header");
  const parsed = JSON.parse(
    new TextDecoder().decode(bytes.subarray(8, 8 + length)),
  ) as SnapshotHeader & { v: number };
  if (parsed.v !== VERSION) throw new Error(`router snapshot: unsupported version ${parsed.v}`);
  return {
    header: {
      chunkBytes: parsed.chunkBytes,
      slots: parsed.slots,
      ...(parsed.bytesPerToken ? { bytesPerToken: parsed.bytesPerToken } : {}),
    },
    index: bytes.subarray(8 + length),
  };
}
