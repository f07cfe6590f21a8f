/**
 * A request's routing key: the chained chunk hashes of its canonical prompt bytes, seeded by the
 * model name so different models never share a prefix, plus the byte and token estimates.
 * This is the edge's share of the work (docs/architecture.md, "One request", step 3): the
 * Durable Object only sees hashes.
 */
import { chunkHashes, DEFAULT_CHUNK_BYTES, estimateTokens, seedHash } from "../chunk-hash.ts";
import { canonicalPieces } from "./canonical-prompt.ts";

export interface PromptKey {
  /** hash[i] names chunks 0..i of the canonical prompt. */
  chunkHashes: number[];
  /** UTF-8 length of the canonical prompt. */
  byteLength: number;
  /** Estimated prompt tokens (bytes / 4). */
  promptTokens: number;
}

const encoder = new TextEncoder();
let buffer = new Uint8Array(64 * 1024);

/** Below this many UTF-16 units one joined string encodes faster than piece by piece. */
const JOIN_BELOW = 32 * 1024;

/** UTF-8 bytes of the pieces, in a reused 4-aligned buffer; valid until the next call. */
function encode(pieces: readonly string[]): Uint8Array {
  let units = 0;
  for (const piece of pieces) units += piece.length;
  // UTF-8 needs at most 3 bytes per UTF-16 code unit.
  if (buffer.length < units * 3) buffer = new Uint8Array(units * 3 + 1024);
  if (units < JOIN_BELOW)
    return buffer.subarray(0, encoder.encodeInto(pieces.join(""), buffer).written);
  let at = 0;
  for (const piece of pieces) at += encoder.encodeInto(piece, buffer.subarray(at)).written;
  return buffer.subarray(0, at);
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

/** Hash canonical prompt pieces (the engine simulator hashes the same text as the router). */
export function keyOfPieces(
  pieces: readonly string[],
  model: string,
  chunkBytes = DEFAULT_CHUNK_BYTES,
): PromptKey {
  const bytes = encode(pieces);
  const hashes = chunkHashes(bytes, chunkBytes, modelSeed(model));
  return {
    chunkHashes: hashes,
    byteLength: bytes.length,
    promptTokens: estimateTokens(bytes.length),
  };
}

/** The routing key of a parsed chat or completions request body. */
export function promptKey(
  body: { model: string; [field: string]: unknown },
  chunkBytes = DEFAULT_CHUNK_BYTES,
): PromptKey {
  return keyOfPieces(canonicalPieces(body), body.model, chunkBytes);
}
