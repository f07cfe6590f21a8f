/**
 * A request's routing key: the chained chunk hashes of its canonical prompt bytes, seeded by the
 * model name so different models never share a prefix, plus the byte and token estimates.
 * This is the edge's share of the work (docs/architecture.md, "One request", step 3): the
 * Durable Object only sees hashes.
 */
import { DEFAULT_CHUNK_BYTES, estimateTokens, seedHash } from "../chunk-hash.ts";
import { writeCanonicalPrompt } from "./canonical-prompt.ts";
import { hashCanonical } from "./chunk-writer.ts";

export interface PromptKey {
  /** hash[i] names chunks 0..i of the canonical prompt. */
  chunkHashes: number[];
  /** UTF-8 length of the canonical prompt. */
  byteLength: number;
  /** Estimated prompt tokens (bytes / 4). */
  promptTokens: number;
}

const seeds = new Map<string, number>();

/** Chain seed for a model: hashes of one model never equal another's. */
export function modelSeed(model: string): number {
  let seed = seeds.get(model);
  if (seed === undefined) {
    seed = seedHash(`model:${model}`);
    if (seeds.size < 1024) seeds.set(model, seed);
  }
  return seed;
}

/** The routing key of a parsed chat or completions request body. */
export function promptKey(
  body: { model: string; [field: string]: unknown },
  chunkBytes = DEFAULT_CHUNK_BYTES,
): PromptKey {
  const { chunkHashes, byteLength } = hashCanonical(
    (sink) => writeCanonicalPrompt(body, sink),
    chunkBytes,
    modelSeed(body.model),
  );
  return { chunkHashes, byteLength, promptTokens: estimateTokens(byteLength) };
}
