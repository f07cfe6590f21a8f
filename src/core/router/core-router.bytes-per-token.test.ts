import { describe, expect, it } from "vitest";
import { policyOf } from "../policies/index.ts";
import { prefillWork } from "../prefill-work.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { freshChain } from "../test-support/fresh-chain.ts";
import { CoreRouter } from "./core-router.ts";

const POOL = parsePool({
  origins: ["a", "b"].map((id) => ({ id, url: `http://${id}.test` })),
  policy: policyOf("cost"),
});

/** A fresh prompt of `chunks` chunks as the edge sends it: bytes, and bytes / 4 as tokens. */
function fresh(n: number, chunks: number) {
  const hashes = freshChain(n, chunks);
  const promptBytes = chunks * POOL.chunkBytes;
  return { chunkHashes: hashes, promptTokens: promptBytes / 4, promptBytes };
}

/** `n` requests whose engines counted one token per byte (this project's llama.cpp engines). */
function train(r: CoreRouter, n: number): number {
  for (let k = 0; k < n; k++) {
    const request = fresh(k, 4);
    const d = r.route(request, k);
    r.complete(d.ticket as string, { ok: true, promptTokens: request.promptBytes }, k);
  }
  return n;
}

describe("CoreRouter: bytes per token learned from engines' prompt_tokens", () => {
  it("cost's estimate of an uncached prompt uses the learned ratio, not bytes / 4", () => {
    const r = new CoreRouter(POOL, { model: "m" });
    const now = train(r, 300);
    expect(r.stats(now).bytesPerToken.bytesPerToken).toBeCloseTo(1, 1);
    const request = fresh(10_000, 16);
    const d = r.route(request, now);
    const tokens = request.promptBytes;
    expect(r.stats(now).recent[0]?.promptTokens).toBeGreaterThan(0.97 * tokens);
    const origin = r.stats(now).origins.find((o) => o.id === d.origin);
    const work = prefillWork(0, tokens, POOL.prefillAttentionTokens);
    expect(origin?.queuedPrefillTokens).toBeGreaterThan(0.95 * work);
  });

  it("the index reads a held prefix as tokens at the learned ratio", () => {
    const r = new CoreRouter(POOL, { model: "m" });
    const now = train(r, 300);
    const request = fresh(20_000, 8);
    const first = r.route(request, now);
    r.complete(first.ticket as string, { ok: true }, now);
    const again = r.route(request, now + 1);
    expect(again.origin).toBe(first.origin);
    expect(again.matchedTokens).toBeGreaterThan(0.97 * request.promptBytes);
  });

  it("a caller that sends no bytes keeps its own estimate", () => {
    const r = new CoreRouter(POOL, { model: "m" });
    const now = train(r, 300);
    const { promptBytes: _, ...request } = fresh(30_000, 4);
    r.route(request, now);
    expect(r.stats(now).recent[0]?.promptTokens).toBe(request.promptTokens);
  });

  it("the learned ratio survives a snapshot round-trip", () => {
    const r = new CoreRouter(POOL, { model: "m" });
    const now = train(r, 300);
    const restored = new CoreRouter(POOL, { model: "m" });
    restored.restore(r.snapshot());
    expect(restored.stats(now).bytesPerToken).toEqual(r.stats(now).bytesPerToken);
    expect(restored.tokensPerChunk).toBe(r.tokensPerChunk);
    // One token per byte: a chunk is about chunkBytes tokens (bytes / 4 would give a quarter).
    expect(restored.tokensPerChunk).toBeGreaterThan(0.98 * POOL.chunkBytes);
  });
});
