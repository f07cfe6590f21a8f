/**
 * Test helpers for the engine model: a profile with round numbers (1 prefill token per ms, no
 * attention term, 10 ms weight read, 4-token blocks) and a minimal driver that replays arrivals
 * through one engine the way the fleet simulator does (arrivals cut decode spans).
 */
import { Engine, type EngineRequest, engineRequest } from "./engine.ts";
import type { EngineProfile } from "./profiles.ts";

export const BLOCK = 4;

export function testProfile(overrides: Partial<EngineProfile> = {}): EngineProfile {
  return {
    name: "test",
    model: "test-model",
    source: "round numbers for hand-checked tests",
    prefillTokensPerSecond: 1000,
    attentionTokens: Number.POSITIVE_INFINITY,
    weightsReadMs: 10,
    kvReadMsPerToken: 0,
    overheadMs: 0,
    kvCapacityTokens: 64 * BLOCK,
    kvBytesPerToken: 1,
    maxBatchedTokens: 1000,
    maxSeqs: 64,
    kvLinkBytesPerSecond: 1000,
    kvTransferLatencyMs: 0,
    ...overrides,
  };
}

export interface Arrival {
  at: number;
  /** Block ids; hashes are the ids themselves (ids must be chained by the test). */
  blocks: number[];
  promptTokens: number;
  outputTokens: number;
  /** Leading prompt tokens whose KV a transfer delivers (a decode engine's request). */
  remoteTokens?: number;
}

/** Replays `arrivals` (sorted by time) through `engine`; returns the requests in arrival order. */
export function replay(engine: Engine, arrivals: readonly Arrival[]): EngineRequest[] {
  const requests = arrivals.map((a, i) =>
    engineRequest(
      i,
      a.blocks.slice(0, Math.floor(a.promptTokens / BLOCK)),
      a.promptTokens,
      a.outputTokens,
      a.at,
      a.remoteTokens,
    ),
  );
  let due: number | null = null;
  let next = 0;
  while (next < requests.length || due !== null) {
    const r = requests[next];
    if (r && (due === null || r.arrivalMs <= due)) {
      engine.enqueue(r);
      if (engine.busy) due = engine.interrupt(r.arrivalMs);
      else due ??= r.arrivalMs;
      next++;
      continue;
    }
    const now = due as number;
    if (engine.busy) engine.finish();
    due = engine.start(now);
  }
  return requests;
}

/** Prefix-chained ids: block k of a prompt that shares `shared` blocks with `base`. */
export function blocksOf(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => base * 1000 + k);
}

export function newEngine(overrides: Partial<EngineProfile> = {}): Engine {
  return new Engine(testProfile(overrides), BLOCK);
}
