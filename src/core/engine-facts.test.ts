import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "./engine-events.ts";
import { changesIndex, factEvents, NO_FACTS, sameFacts, withEvents } from "./engine-facts.ts";

const event: fc.Arbitrary<EngineEvent> = fc.oneof(
  fc.record({
    type: fc.constant("load" as const),
    running: fc.nat(9),
    waiting: fc.nat(9),
    kvUsage: fc.constant(0.5),
  }),
  fc.record({
    type: fc.constant("capacity" as const),
    kvCapacityTokens: fc.integer({ min: 1, max: 9 }),
  }),
  fc.constant({ type: "cache-reset" as const }),
  fc.record({
    type: fc.constant("health" as const),
    status: fc.constantFrom("up" as const, "draining" as const, "down" as const),
  }),
);

describe("engine facts", () => {
  it("the last statement of each fact wins; load and resets are not facts", () => {
    const facts = withEvents(NO_FACTS, [
      { type: "health", status: "down" },
      { type: "capacity", kvCapacityTokens: 100 },
      { type: "load", running: 1, waiting: 0, kvUsage: 0 },
      { type: "cache-reset" },
      { type: "health", status: "draining" },
    ]);
    expect(facts).toEqual({ health: "draining", kvCapacityTokens: 100 });
    expect(factEvents(NO_FACTS)).toEqual([]);
  });

  it("property: stating the facts again gives the same facts, and changes nothing after them", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), (events) => {
        const facts = withEvents(NO_FACTS, events);
        expect(withEvents(NO_FACTS, factEvents(facts))).toEqual(facts);
        expect(sameFacts(withEvents(facts, factEvents(facts)), facts)).toBe(true);
        expect(changesIndex(factEvents(facts))).toBe(false);
      }),
    );
  });
});
