/**
 * The two ceilings a policy's hit rate is read against. Both replay the whole workload in
 * arrival order through one `BlockCache` (the engines' own cache: LRU over chunks, a request's
 * chunks freed deepest first so a prefix outlives its tails) and count hits as an engine reports
 * them (leading full chunks, never the prompt's last token, which vLLM always recomputes):
 * - infinite: a cache with a block for every chunk of the workload, so nothing is evicted: the
 *   trace's reuse ceiling;
 * - fleet LRU: one cache as large as the whole fleet's KV capacity: what perfect routing of this
 *   fleet could approach (it ignores the KV that running requests pin, so it is optimistic).
 * Hit rate = cached prompt tokens / prompt tokens.
 */
import { BlockCache } from "../engine/block-cache.ts";
import { hashesOf, type Workload } from "./workload.ts";

/** Each request's cached prompt tokens, replayed in arrival order through a cache of `blocks`. */
function replayHits(w: Workload, blocks: number): Int32Array {
  const cache = new BlockCache(Math.max(1, blocks));
  const held: number[] = [];
  const hits = new Int32Array(w.size);
  for (let i = 0; i < w.size; i++) {
    const hashes = hashesOf(w, i);
    const tokens = w.promptTokens[i] as number;
    hits[i] = cache.lookup(hashes, Math.floor((tokens - 1) / w.chunkTokens)) * w.chunkTokens;
    held.length = 0;
    cache.acquire(hashes, cache.lookup(hashes, hashes.length), held);
    for (let c = held.length; c < hashes.length; c++) {
      const b = cache.allocate();
      cache.seal(b, hashes[c] as number);
      held.push(b);
    }
    cache.release(held);
  }
  return hits;
}

function replayHitRate(w: Workload, blocks: number): number {
  const hits = replayHits(w, blocks);
  let cached = 0;
  let prompt = 0;
  for (let i = 0; i < w.size; i++) {
    cached += hits[i] as number;
    prompt += w.promptTokens[i] as number;
  }
  return prompt > 0 ? cached / prompt : 0;
}

/** Each request's cached tokens with a cache that never evicts (what no policy can beat). */
export function infiniteOracleHits(w: Workload): Int32Array {
  return replayHits(w, w.hashes.length);
}

export function infiniteOracleHitRate(w: Workload): number {
  return replayHitRate(w, w.hashes.length);
}

export function fleetOracleHitRate(w: Workload, capacityChunks: number): number {
  return replayHitRate(w, capacityChunks);
}
