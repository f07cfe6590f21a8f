import { describe, expect, it } from "vitest";
import { asPosition } from "../origin-indexes.ts";
import { origin } from "../policies/test-context.ts";
import { failoverOrder } from "./failover-order.ts";

const pool = [
  origin({ id: "a", outstanding: 5 }),
  origin({ id: "b", outstanding: 1 }),
  origin({ id: "c", outstanding: 0, eligible: false }),
  origin({ id: "d", outstanding: 3 }),
  origin({ id: "e", outstanding: 2 }),
];

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
