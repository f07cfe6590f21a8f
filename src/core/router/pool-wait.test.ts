import { describe, expect, it } from "vitest";
import { origin } from "../test-support/policy-context.ts";
import { originWaitMs, poolWaitMs } from "./pool-wait.ts";

const engine = (waiting: number, freshness = 1) => ({
  running: 4,
  waiting,
  kvUsage: 0.5,
  freshness,
});

describe("pool wait", () => {
  it("is the queued work, the decode term and foreign waiting requests over the speed", () => {
    const view = origin({
      outstanding: 2,
      queuedPrefillTokens: 5000,
      activeTokens: 20_000,
      engine: engine(5, 0.5),
      prefillTokensPerSecond: 10_000,
    });
    // (5,000 + 0.05 x 20,000 + 0.5 x (5 - 2) x 2,000) / 10,000 tokens/s = 0.9 s.
    expect(originWaitMs(view, 2000)).toBeCloseTo(900, 6);
  });

  it("is 0 at an origin with nothing in flight and nothing foreign waiting", () => {
    const idle = origin({ queuedPrefillTokens: 1e9, activeTokens: 1e9, engine: engine(0) });
    expect(originWaitMs(idle, 1000)).toBe(0);
    expect(originWaitMs({ ...idle, engine: engine(1) }, 1000)).toBeGreaterThan(0);
  });

  it("is the least over eligible origins, and 0 when none is eligible", () => {
    const busy = origin({ outstanding: 1, queuedPrefillTokens: 10_000 });
    const less = origin({ outstanding: 1, queuedPrefillTokens: 2000 });
    expect(poolWaitMs([busy, less], 0)).toBeCloseTo(200, 6);
    expect(poolWaitMs([busy, { ...less, eligible: false }], 0)).toBeCloseTo(1000, 6);
    expect(poolWaitMs([{ ...busy, eligible: false }], 0)).toBe(0);
  });
});
