/**
 * Where a pool's index learns which origin holds which prefix (the pool's `indexFeed`):
 *
 * - "router" (default): the router's own decisions. `route` records that the chosen origin will
 *   hold the prompt (as SGLang's tree, llm-d's approximate scorer and Dynamo's
 *   `--no-router-kv-events` mode do), a failure before the first byte takes that back, and the
 *   engine's `cached_tokens` corrects each origin's capacity. kv events are ignored.
 * - "engine-events": the engine's own block cache, as Dynamo's KV router and llm-d's precise
 *   scorer read it from vLLM's KV events. The router claims nothing on `route`; `kv-stored`
 *   inserts the run under its parent's path and `kv-removed` drops each block and what the
 *   origin holds below it (ownership stays prefix-closed: an engine evicts a sequence's tail
 *   before its prefix). Capacity is what the engine reports, never learned from misses.
 *
 * The events must name blocks by the router's chunk hashes; see docs/architecture.md ("Index
 * feed") for why only the simulator's engines can today.
 */
import type { KvEvent } from "../engine-events.ts";
import type { RadixIndex } from "../radix-index/radix-index.ts";

export type IndexFeed = "router" | "engine-events";

/** Whether `route` claims the prompt for the chosen origin (and failures take it back). */
export function claimsOnRoute(feed: IndexFeed): boolean {
  return feed === "router";
}

/**
 * Apply one kv event of origin `slot` to the index. Returns false when the event could not be
 * placed: a `kv-stored` run whose parent no origin holds (its path is unknown), or any kv event
 * under the "router" feed.
 */
export function applyKvEvent(
  index: RadixIndex,
  feed: IndexFeed,
  slot: number,
  event: KvEvent,
  now: number,
): boolean {
  if (feed !== "engine-events") return false;
  if (event.type === "kv-removed") {
    for (const hash of event.hashes) index.dropFrom(hash, slot);
    return true;
  }
  const path = event.parent === null ? [] : index.pathOf(event.parent);
  if (path === null) return false;
  for (const hash of event.hashes) path.push(hash);
  index.insert(path, slot, now);
  return true;
}
