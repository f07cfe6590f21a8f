/**
 * The summary a cold replica bootstraps from: the coordinator's router snapshot (each origin's
 * slot and learned capacity, and the index) with the index cut to its `maxChunks` most recently
 * used chunks, the budget eviction `RadixIndex.restore` applies to a lower budget (the globally
 * least recently used first, so what stays is prefix-closed and recent). Bounded by
 * `bootstrapMaxChunks` whatever the coordinator holds: about 20-40 bytes per chunk.
 * O(coordinator index) to build, so a coordinator keeps one for a while (edge-coordinator.ts).
 */
import { RadixIndex } from "../radix-index/radix-index.ts";
import { decodeSnapshot, encodeSnapshot } from "../router/router-snapshot.ts";

export function boundedSnapshot(snapshot: Uint8Array, maxChunks: number): Uint8Array {
  const { header, index } = decodeSnapshot(snapshot);
  const cut = RadixIndex.restore(index, { maxChunks });
  return encodeSnapshot(header, cut.snapshot());
}
