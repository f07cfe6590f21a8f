/**
 * The grain of an edge pool's indexes: replicas and coordinators index every
 * `edge.chunkStride`-th chunk hash of a prompt. Hashes are chained, so hash k x stride - 1 names
 * the whole prefix of k x stride chunks, and the strided hashes are themselves a chain of
 * prefix names: an index over them is the radix index of a chunk size stride-fold larger
 * (`chunkBytes` x stride), which is how the routers are configured. Each isolate applies every
 * claim of its pool, so this divides its CPU, its memory per prefix and the bytes of a claim by
 * the stride, at the price of matches rounded down to the grain (512 tokens at the defaults: a
 * small error beside prompts of thousands). A prompt shorter than one grain is never matched.
 */
import type { PoolSettings } from "../settings/settings-schema.ts";

/** The pool an edge index runs on: the pool's, with chunks of stride x `chunkBytes`. */
export function edgeIndexPool(pool: PoolSettings): PoolSettings {
  return { ...pool, chunkBytes: pool.chunkBytes * pool.edge.chunkStride };
}

/** Every `stride`-th hash (the last of each whole stride). */
export function strided(hashes: ArrayLike<number>, stride: number): ArrayLike<number> {
  if (stride === 1) return hashes;
  const out: number[] = [];
  for (let i = stride - 1; i < hashes.length; i += stride) out.push(hashes[i] as number);
  return out;
}
