import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../../src/core/engine-events.ts";
import { MIN_PREFILL_SECONDS, PrefillCounters } from "./prefill-counters.ts";
import { objectFront } from "./routing-front.ts";
import { runPolicy, simProfiles, workloadOf } from "./runner.ts";
import { conversationSpec } from "./test-spec.ts";

describe("PrefillCounters", () => {
  it("differences the counters into a rate once the span covers the reporter's minimum", () => {
    const c = new PrefillCounters(2);
    expect(c.read(0, 500, MIN_PREFILL_SECONDS * 1000 - 1)).toBeNull();
    expect(c.read(0, 2_000, 200)).toEqual({
      type: "prefill-rate",
      tokensPerSecond: 10_000,
      tokens: 2_000,
    });
    // The next span starts where that one ended; the other origin's is its own.
    expect(c.read(0, 2_000, 400)).toBeNull();
    expect(c.read(0, 5_000, 500)).toEqual({
      type: "prefill-rate",
      tokensPerSecond: 10_000,
      tokens: 3_000,
    });
    expect(c.read(1, 100, 100)).toEqual({
      type: "prefill-rate",
      tokensPerSecond: 1_000,
      tokens: 100,
    });
  });
});

describe("fleet simulation: the engines' prefill rates", () => {
  const spec = conversationSpec({ limit: 200, arrivals: "spread", load: 0.8, origins: 4 });

  /** The prefill-rate events each origin's router was delivered in a replay of `policy`. */
  function rates(policy: "cost" | "dynamo" | "llm-d"): Map<string, EngineEvent[]> {
    const seen = new Map<string, EngineEvent[]>();
    const front: typeof objectFront = (env) => {
      const inner = objectFront(env);
      const wrapped = Object.create(inner);
      wrapped.ingest = (id: string, events: readonly EngineEvent[], t: number) => {
        for (const e of events) {
          if (e.type === "prefill-rate") seen.set(id, [...(seen.get(id) ?? []), e]);
        }
        inner.ingest(id, events, t);
      };
      return wrapped;
    };
    runPolicy(workloadOf(spec), spec, policy, undefined, { front });
    return seen;
  }

  it("reach this router's learner with its load reports, as its reporter sends them", () => {
    const seen = rates("cost");
    expect(seen.size).toBe(4);
    const linear = simProfiles(spec).profile.prefillTokensPerSecond;
    for (const events of seen.values()) {
      for (const e of events) {
        if (e.type !== "prefill-rate") continue;
        // Below the profile's linear speed: attention, and the decode batch every prefilling
        // iteration carries (a third of it here, at load 0.8).
        expect(e.tokensPerSecond).toBeLessThanOrEqual(linear);
        expect(e.tokensPerSecond).toBeGreaterThan(linear / 10);
      }
    }
  }, 60_000);

  it("reach no baseline's router: none reads an engine's prefill counters", () => {
    expect(rates("dynamo").size).toBe(0);
    expect(rates("llm-d").size).toBe(0);
  }, 60_000);
});
