import { describe, expect, it } from "vitest";
import { prefillWork } from "../../src/core/prefill-work.ts";
import { type Engine, engineRequest } from "./engine.ts";
import { BLOCK, blocksOf, newEngine, replay } from "./test-engine.ts";

// Test profile: an iteration with P prefill tokens and d decodes takes max(P + d, 10) ms.

describe("Engine", () => {
  it("times prefill and decode iterations by the roofline", () => {
    const [r] = replay(newEngine(), [
      { at: 0, blocks: blocksOf(1, 10), promptTokens: 40, outputTokens: 4 },
    ]);
    expect(r?.firstTokenMs).toBe(40);
    // Three decode iterations of max(1, 10) ms.
    expect(r?.finishMs).toBe(70);
    expect(r?.cachedTokens).toBe(0);
  });

  it("slows decode iterations as the contexts they read grow", () => {
    const [r] = replay(newEngine({ kvReadMsPerToken: 0.1 }), [
      { at: 0, blocks: blocksOf(1, 10), promptTokens: 40, outputTokens: 4 },
    ]);
    // Decode j reads 41 + j tokens of KV: 10 + 0.1 * (41 + j) ms.
    expect(r?.finishMs).toBeCloseTo(40 + 14.1 + 14.2 + 14.3, 9);
  });

  it("prefills only the uncached rest of a prompt whose prefix is cached", () => {
    const shared = blocksOf(1, 10);
    const [a, b] = replay(newEngine(), [
      { at: 0, blocks: shared, promptTokens: 40, outputTokens: 1 },
      { at: 100, blocks: [...shared.slice(0, 8), 5001, 5002], promptTokens: 40, outputTokens: 1 },
    ]);
    expect(a?.cachedTokens).toBe(0);
    expect(b?.cachedTokens).toBe(32);
    // 8 uncached tokens: max(8, 10) = 10 ms.
    expect((b?.firstTokenMs as number) - 100).toBe(10);
  });

  it("always recomputes the last token of a fully cached prompt", () => {
    const blocks = blocksOf(1, 10);
    const [, b] = replay(newEngine(), [
      { at: 0, blocks, promptTokens: 40, outputTokens: 1 },
      { at: 100, blocks, promptTokens: 40, outputTokens: 1 },
    ]);
    expect(b?.cachedTokens).toBe(36);
  });

  it("evicts least recently used blocks, a prompt's tail before its prefix", () => {
    const engine = newEngine({ kvCapacityTokens: 12 * BLOCK });
    const a = blocksOf(1, 8);
    const [, , again] = replay(engine, [
      { at: 0, blocks: a, promptTokens: 32, outputTokens: 1 },
      { at: 100, blocks: blocksOf(2, 8), promptTokens: 32, outputTokens: 1 },
      { at: 200, blocks: a, promptTokens: 32, outputTokens: 1 },
    ]);
    // 4 empty blocks went first, then a's last 4: its first 4 blocks survive.
    expect(again?.cachedTokens).toBe(16);
    expect(engine.cache.free).toBe(12);
  });

  it("admits a request only when its blocks are free", () => {
    const engine = newEngine({ kvCapacityTokens: 12 * BLOCK });
    const [a, b] = replay(engine, [
      { at: 0, blocks: blocksOf(1, 8), promptTokens: 32, outputTokens: 3 },
      { at: 0, blocks: blocksOf(2, 8), promptTokens: 32, outputTokens: 3 },
    ]);
    // b needs 8 blocks (+1 for its output) but only 3 are free while a runs.
    expect(b?.firstTokenMs).toBeGreaterThanOrEqual(a?.finishMs as number);
    expect(engine.cache.free).toBe(12);
  });

  it("makes time to first token grow with the queue", () => {
    const engine = newEngine({ maxBatchedTokens: 40 });
    const requests = replay(
      engine,
      [1, 2, 3, 4].map((k) => ({
        at: 0,
        blocks: blocksOf(k, 10),
        promptTokens: 40,
        outputTokens: 1,
      })),
    );
    expect(requests.map((r) => r.firstTokenMs)).toEqual([40, 80, 120, 160]);
  });

  it("preempts the newest request when decoding runs out of blocks, and both finish", () => {
    const engine = newEngine({ kvCapacityTokens: 10 * BLOCK });
    const [a, b] = replay(engine, [
      { at: 0, blocks: blocksOf(1, 3), promptTokens: 12, outputTokens: 14 },
      { at: 0, blocks: blocksOf(2, 3), promptTokens: 12, outputTokens: 14 },
    ]);
    expect(engine.preemptions).toBeGreaterThan(0);
    expect(a?.generated).toBe(14);
    expect(b?.generated).toBe(14);
    expect(b?.finishMs).toBeGreaterThan(a?.finishMs as number);
    expect(engine.cache.free).toBe(10);
  });

  it("lets an arrival join at the first iteration boundary of a decode span", () => {
    const [a, b] = replay(newEngine(), [
      { at: 0, blocks: blocksOf(1, 10), promptTokens: 40, outputTokens: 100 },
      { at: 45, blocks: blocksOf(2, 10), promptTokens: 40, outputTokens: 1 },
    ]);
    // a's decode span starts at 40 in 10 ms iterations; b joins the one starting at 50, which
    // prefills 40 tokens beside a's decode: max(40 + 1, 10) = 41 ms. a then has 97 tokens left.
    expect(b?.firstTokenMs).toBe(91);
    expect(a?.finishMs).toBe(40 + 10 + 41 + 97 * 10);
  });

  it("takes a transferred prompt's KV as computed: one iteration to the first token", () => {
    const blocks = blocksOf(1, 10);
    const engine = newEngine();
    const [a, b] = replay(engine, [
      { at: 0, blocks, promptTokens: 40, outputTokens: 4, remoteTokens: 39 },
      { at: 100, blocks, promptTokens: 40, outputTokens: 1 },
    ]);
    // The last prompt token is computed beside nothing: max(1, 10) ms, then 3 decodes.
    expect(a?.firstTokenMs).toBe(10);
    expect(a?.finishMs).toBe(40);
    expect(a?.cachedTokens).toBe(39);
    // The transferred blocks were sealed: a later request reuses them like prefilled ones.
    expect(b?.cachedTokens).toBe(36);
    expect(engine.cache.free).toBe(engine.cache.total);
  });

  it("records each request's longest gap between output tokens, and every gap", () => {
    const engine = newEngine();
    const [a, b] = replay(engine, [
      { at: 0, blocks: blocksOf(1, 1), promptTokens: 4, outputTokens: 5 },
      { at: 25, blocks: blocksOf(2, 50), promptTokens: 200, outputTokens: 1 },
    ]);
    // a's tokens: 10, 20, 30 (the span is cut where b arrives), then one iteration that
    // prefills b's 200 tokens beside a's decode (201 ms), then 10 ms again.
    expect(a?.firstTokenMs).toBe(10);
    expect(a?.finishMs).toBe(241);
    expect(a?.maxGapMs).toBe(201);
    expect(b?.maxGapMs).toBe(0);
    // Four gaps, all a's: 10, 10, 201, 10 (b's one token has none).
    const { values, counts } = engine.gaps.sorted();
    const all = [...values].flatMap((v, i) => Array<number>(counts[i] as number).fill(v));
    expect(all).toEqual([10, 10, 10, 201]);
  });

  it("counts a decode span's gaps once per iteration and request", () => {
    const engine = newEngine({ kvReadMsPerToken: 0.1 });
    replay(engine, [
      { at: 0, blocks: blocksOf(1, 10), promptTokens: 40, outputTokens: 4 },
      { at: 0, blocks: blocksOf(2, 10), promptTokens: 40, outputTokens: 4 },
    ]);
    // Both prefill in one 80 ms iteration, then 3 decode iterations over both: 6 gaps in 3
    // entries, iteration j reading 2 x (41 + j) tokens: 10 + 0.1 * 2 * (41 + j) ms.
    const { values, counts } = engine.gaps.sorted();
    expect([...counts]).toEqual([2, 2, 2]);
    expect(values[0]).toBeCloseTo(18.2, 9);
    expect(values[2]).toBeCloseTo(18.6, 9);
  });

  it("finds a decode span's longest gap in its last iteration, as contexts grow", () => {
    const [a] = replay(newEngine({ kvReadMsPerToken: 0.1 }), [
      { at: 0, blocks: blocksOf(1, 10), promptTokens: 40, outputTokens: 4 },
    ]);
    expect(a?.maxGapMs).toBeCloseTo(14.3, 9);
  });

  it("rejects a request that could never fit the cache", () => {
    const engine = newEngine({ kvCapacityTokens: 4 * BLOCK });
    expect(() =>
      replay(engine, [{ at: 0, blocks: blocksOf(1, 5), promptTokens: 20, outputTokens: 1 }]),
    ).toThrow(/needs 6 KV blocks/);
  });

  it("drops an aborted waiting request: it never starts, and the queue no longer counts it", () => {
    const engine = newEngine({ maxSeqs: 1 });
    const first = engineRequest(0, blocksOf(1, 4), 16, 2, 0);
    const gone = engineRequest(1, blocksOf(2, 4), 16, 2, 0);
    const next = engineRequest(2, blocksOf(3, 4), 16, 2, 0);
    for (const r of [first, gone, next]) engine.enqueue(r);
    expect(engine.waiting).toBe(3);
    engine.abort(gone);
    expect(engine.waiting).toBe(2);
    const seen = runUntilIdle(engine, 0);
    expect(seen).toEqual([0, 2]);
    expect(Number.isNaN(gone.firstTokenMs)).toBe(true);
  });

  it("stops an aborted running request after the step in progress and frees its blocks", () => {
    const engine = newEngine();
    const r = engineRequest(0, blocksOf(1, 10), 40, 100, 0);
    engine.enqueue(r);
    engine.start(0);
    engine.abort(r);
    const { done, started } = engine.finish();
    expect(done).toEqual([]);
    expect(started).toEqual([]);
    expect(engine.running).toBe(0);
    expect(engine.cache.used).toBe(0);
    expect(engine.start(40)).toBeNull();
  });

  it("counts its prefill backlog in the router's unit, attention-weighted, not in raw tokens", () => {
    // The queue probe compared the router's attention-weighted queue with this backlog in raw
    // tokens, so on long prompts the router looked twice the engine's queue.
    const engine = newEngine({ attentionTokens: 100, maxBatchedTokens: 20 });
    const r = engineRequest(0, blocksOf(1, 10), 40, 1, 0);
    engine.enqueue(r);
    expect(engine.prefillBacklog).toBeCloseTo(prefillWork(0, 40, 100), 9);
    engine.start(0);
    engine.finish();
    // Half prefilled: the rest attends to the first 20 tokens too.
    expect(r.computed).toBe(20);
    expect(engine.prefillBacklog).toBeCloseTo(prefillWork(20, 40, 100), 9);
    expect(engine.prefillBacklog).toBeGreaterThan(20);
  });
});

/** Step `engine` from `now` until it has no work; the ids of requests that finished, in order. */
function runUntilIdle(engine: Engine, now: number): number[] {
  const finished: number[] = [];
  for (let t = engine.start(now); t !== null; t = engine.start(t)) {
    for (const r of engine.finish().done) finished.push(r.id);
  }
  return finished;
}
