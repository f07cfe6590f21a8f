/**
 * Block ids to the router's chunk hashes. A trace names its prompt in blocks (512 tokens for
 * Mooncake); the router and the engines work in chunks of `pool.chunkBytes / 4` tokens (64 by
 * default). Both are cut into units of the smaller size: unit u of block b gets the value
 * b * unitsPerBlock + u, and the values are chained with the core's `chainHash` from the model's
 * seed, one hash per full chunk. So equal block-id prefixes give equal hash prefixes, the first
 * differing block changes every hash after it, and only full chunks count, as in the Worker.
 */
import { chainHash } from "../../src/core/chunk-hash.ts";

export function chunkHashesOf(
  blockIds: readonly number[],
  blockTokens: number,
  inputTokens: number,
  chunkTokens: number,
  seed: number,
  out: Float64Array,
): number {
  const unit = Math.min(blockTokens, chunkTokens);
  if (Math.max(blockTokens, chunkTokens) % unit !== 0) {
    throw new RangeError(`block size ${blockTokens} and chunk size ${chunkTokens} must nest`);
  }
  const unitsPerBlock = blockTokens / unit;
  const unitsPerChunk = chunkTokens / unit;
  const chunks = Math.min(
    Math.floor(inputTokens / chunkTokens),
    Math.floor((blockIds.length * blockTokens) / chunkTokens),
  );
  let h = seed;
  for (let c = 0, g = 0; c < chunks; c++) {
    for (let u = 0; u < unitsPerChunk; u++, g++) {
      const block = blockIds[Math.floor(g / unitsPerBlock)] as number;
      h = chainHash(h, block * unitsPerBlock + (g % unitsPerBlock));
    }
    out[c] = h;
  }
  return chunks;
}
