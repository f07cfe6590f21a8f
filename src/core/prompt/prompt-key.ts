/**
 * A request's routing key: the chained chunk hashes of its canonical prompt bytes, seeded by the
 * model name so different models never share a prefix, plus the byte and token estimates.
 * This is the edge's share of the work (docs/architecture.md, "One request", step 3): the
 * Durable Object only sees hashes. Each API has its canonicaliser (`canonical-prompt.ts` for
 * chat and completions, `messages-prompt.ts`, `responses-prompt.ts`), all in one framing, so a
 * conversation hashes alike through whichever API carries it, as far as its records agree.
 */
import { DEFAULT_CHUNK_BYTES, estimateTokens, seedHash } from "../chunk-hash.ts";
import { writeCanonicalPrompt } from "./canonical-prompt.ts";
import { hashCanonical } from "./chunk-writer.ts";
import type { CanonicalSink } from "./framing.ts";
import { writeMessagesPrompt } from "./messages-prompt.ts";
import { writeResponsesPrompt } from "./responses-prompt.ts";

export interface PromptKey {
  /** hash[i] names chunks 0..i of the canonical prompt. */
  chunkHashes: number[];
  /** UTF-8 length of the canonical prompt. */
  byteLength: number;
  /** Estimated prompt tokens (bytes / 4). */
  promptTokens: number;
}

/** The API a request body is in: it picks the canonicaliser. */
export type PromptApi = "chat" | "completions" | "messages" | "responses";

/** Chat and completions share one canonicaliser, which tells them apart by `messages`. */
const writers: Readonly<Record<PromptApi, (body: unknown, sink: CanonicalSink) => void>> = {
  chat: writeCanonicalPrompt,
  completions: writeCanonicalPrompt,
  messages: writeMessagesPrompt,
  responses: writeResponsesPrompt,
};

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

/** The routing key of a parsed request body of `api` (default: chat or completions). */
export function promptKey(
  body: { model: string; [field: string]: unknown },
  chunkBytes = DEFAULT_CHUNK_BYTES,
  api: PromptApi = "chat",
): PromptKey {
  const write = writers[api];
  const { chunkHashes, byteLength } = hashCanonical(
    (sink) => write(body, sink),
    chunkBytes,
    modelSeed(body.model),
  );
  return { chunkHashes, byteLength, promptTokens: estimateTokens(byteLength) };
}

/** The canonical prompt text of a request body of `api` (tests, documentation). */
export function canonicalText(body: unknown, api: PromptApi): string {
  const pieces: string[] = [];
  writers[api](body, {
    text: (value) => pieces.push(value),
    tokenId: (id) => pieces.push(`${id},`),
  });
  return pieces.join("");
}
