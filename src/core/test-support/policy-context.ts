/** Test helper: a policy context from a compact description of the pool. */

import type { OriginView, PolicyContext } from "../policies/policy.ts";
import { createRng } from "../rng.ts";

export interface OriginSpec extends Partial<OriginView> {
  matched?: number;
  /** What `addedChunks` answers for this origin (default: every chunk of the prompt). */
  added?: number;
}

export function origin(
  spec: OriginSpec = {},
  i = 0,
): OriginView & { matched: number; added: number | undefined } {
  return {
    id: spec.id ?? `o${i}`,
    eligible: spec.eligible ?? true,
    outstanding: spec.outstanding ?? 0,
    queuedPrefillTokens: spec.queuedPrefillTokens ?? 0,
    activeTokens: spec.activeTokens ?? 0,
    prefillingTokens: spec.prefillingTokens ?? 0,
    activeChunks: spec.activeChunks ?? 0,
    indexedTokens: spec.indexedTokens ?? 0,
    engine: spec.engine ?? null,
    prefillTokensPerSecond: spec.prefillTokensPerSecond ?? 10_000,
    weight: spec.weight ?? 1,
    matched: spec.matched ?? 0,
    added: spec.added,
  };
}

export function context(
  specs: readonly OriginSpec[],
  request: {
    promptTokens?: number;
    chunkHashes?: number[];
    sessionKey?: string;
    hotTokens?: number;
    sharedTokens?: number;
  } = {},
  seed = 1,
): PolicyContext {
  const origins = specs.map((s, i) => origin(s, i));
  const promptTokens = request.promptTokens ?? 4096;
  const chunkHashes =
    request.chunkHashes ??
    Array.from({ length: Math.floor(promptTokens / 64) }, (_, i) => 1000 + i);
  const allChunks = Math.ceil(promptTokens / 64);
  return {
    request: {
      chunkHashes,
      promptTokens,
      sessionKey: request.sessionKey,
    },
    origins,
    matchedTokens: origins.map((o) => o.matched),
    tokensPerChunk: 64,
    attentionTokens: 32_768,
    hotTokens: () => request.hotTokens ?? 0,
    sharedTokens: () => request.sharedTokens ?? 0,
    addedChunks: (i) => origins[i]?.added ?? allChunks,
    now: 0,
    rng: createRng(seed),
  };
}
