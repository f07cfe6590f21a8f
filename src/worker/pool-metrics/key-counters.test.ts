import { describe, expect, it } from "vitest";
import type { RequestReport } from "../request-record/request-report.ts";
import { KeyCounterSet, MAX_KEY_LABELS, OTHER_KEYS } from "./key-counters.ts";

const report = (keyId: string | undefined, promptTokens = 10): RequestReport => ({
  origin: "o",
  outcome: "ok",
  failures: [],
  matchedTokens: 0,
  promptTokens,
  objectMs: null,
  fallback: null,
  ...(keyId === undefined ? {} : { keyId }),
});

describe("KeyCounterSet", () => {
  it("labels the first keys it sees, counts the rest as `other`, and never lowers a counter", () => {
    const set = new KeyCounterSet();
    set.record(report(undefined));
    expect(set.snapshot()).toEqual({});
    let previous: Record<string, number> = {};
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < MAX_KEY_LABELS + 8; i++) set.record(report(`key-${i}`));
      const now = set.snapshot();
      expect(Object.keys(now)).toHaveLength(MAX_KEY_LABELS + 1);
      expect(now[OTHER_KEYS]?.requests.ok).toBe(8 * (round + 1));
      expect(now[`key-${MAX_KEY_LABELS}`]).toBeUndefined();
      for (const [key, n] of Object.entries(previous)) {
        expect(now[key]?.requests.ok ?? 0).toBeGreaterThanOrEqual(n);
      }
      previous = Object.fromEntries(Object.entries(now).map(([k, c]) => [k, c.requests.ok ?? 0]));
    }
    expect(set.snapshot()["key-0"]).toEqual({ requests: { ok: 3 }, promptTokens: 30 });
  });
});
