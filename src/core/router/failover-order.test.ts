import { describe, expect, it } from "vitest";
import { asPosition } from "../origin-indexes.ts";
import type { OriginView } from "../policies/policy.ts";
import { failoverOrder } from "./failover-order.ts";

const view = (id: string, outstanding: number, eligible = true): OriginView => ({
  id,
  eligible,
  outstanding,
  queuedPrefillTokens: 0,
  activeTokens: 0,
  prefillingTokens: 0,
  activeChunks: 0,
  indexedTokens: 0,
  engine: null,
  prefillTokensPerSecond: 10_000,
  weight: 1,
});

const pool = [view("a", 5), view("b", 1), view("c", 0, false), view("d", 3), view("e", 2)];

describe("failoverOrder", () => {
  it("takes the policy's ranking first, skipping the chosen and ineligible origins", () => {
    expect(failoverOrder(pool, asPosition(0), [0, 2, 3, 1], 2)).toEqual(["d", "b"]);
  });

  it("completes the ranking with the fewest in flight, up to the budget", () => {
    expect(failoverOrder(pool, asPosition(1), [3], 3)).toEqual(["d", "e", "a"]);
    expect(failoverOrder(pool, asPosition(1), undefined, 10)).toEqual(["e", "d", "a"]);
    expect(failoverOrder(pool, asPosition(1), [3], 0)).toEqual([]);
  });
});
