import { describe, expect, it } from "vitest";
import { engineEvent, MAX_KV_HASHES } from "./engine-events.ts";

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
