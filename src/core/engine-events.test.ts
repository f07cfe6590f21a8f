import { describe, expect, it } from "vitest";
import { engineEvent, MAX_KV_HASHES } from "./engine-events.ts";
import { changesIndex, NO_FACTS, withEvents } from "./engine-facts.ts";

describe("prefill-rate", () => {
  it("accepts a measured speed over a count of tokens", () => {
    const event = { type: "prefill-rate", tokensPerSecond: 562.4, tokens: 3100 };
    expect(engineEvent.parse(event)).toEqual(event);
  });

  it.each([
    ["a zero speed", { type: "prefill-rate", tokensPerSecond: 0, tokens: 1 }, "tokensPerSecond"],
    [
      "an infinite speed",
      { type: "prefill-rate", tokensPerSecond: Number.POSITIVE_INFINITY, tokens: 1 },
      "tokensPerSecond",
    ],
    ["no tokens", { type: "prefill-rate", tokensPerSecond: 500, tokens: 0 }, "tokens"],
    ["fractional tokens", { type: "prefill-rate", tokensPerSecond: 500, tokens: 1.5 }, "tokens"],
    [
      "an unknown field",
      { type: "prefill-rate", tokensPerSecond: 500, tokens: 9, seconds: 1 },
      undefined,
    ],
  ])("rejects %s", (_name, event, field) => {
    const result = engineEvent.safeParse(event);
    expect(result.success).toBe(false);
    if (field) expect(result.error?.issues[0]?.path[0]).toBe(field);
  });
});

describe("measurements", () => {
  it("load and prefill-rate change no fact and no index, so the objects write nothing for them", () => {
    const load = { type: "load", running: 1, waiting: 0, kvUsage: 0.1 } as const;
    const rate = { type: "prefill-rate", tokensPerSecond: 500, tokens: 9 } as const;
    expect(withEvents(NO_FACTS, [load, rate])).toEqual(NO_FACTS);
    expect(changesIndex([load, rate])).toBe(false);
    expect(changesIndex([load, { type: "cache-reset" }])).toBe(true);
    expect(withEvents(NO_FACTS, [rate, { type: "health", status: "down" }]).health).toBe("down");
  });
});

describe("kv events", () => {
  it("accept a stored run after a parent or at the root, and removed blocks", () => {
    for (const event of [
      { type: "kv-stored", parent: 12, hashes: [13, 14] },
      { type: "kv-stored", parent: null, hashes: [Number.MAX_SAFE_INTEGER] },
      { type: "kv-removed", hashes: [13] },
    ]) {
      expect(engineEvent.safeParse(event).success, JSON.stringify(event)).toBe(true);
    }
  });

  it.each([
    ["no parent", { type: "kv-stored", hashes: [1] }, "parent"],
    ["no hashes", { type: "kv-removed", hashes: [] }, "hashes"],
    ["a fractional hash", { type: "kv-removed", hashes: [1.5] }, "hashes"],
    ["a hash past 2^53", { type: "kv-stored", parent: 2 ** 53, hashes: [1] }, "parent"],
    [
      "too many hashes",
      { type: "kv-removed", hashes: Array.from({ length: MAX_KV_HASHES + 1 }, (_, i) => i) },
      "hashes",
    ],
  ])("reject %s, naming the field", (_name, event, field) => {
    const result = engineEvent.safeParse(event);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path[0]).toBe(field);
  });
});
