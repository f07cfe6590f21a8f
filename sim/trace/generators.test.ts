import { describe, expect, it } from "vitest";
import { generateTrace } from "./generators.ts";

describe("synthetic generators", () => {
  it.each(["rag", "sessions", "no-sharing", "agentic"])(
    "%s is seeded, ordered and well formed",
    (name) => {
      const a = generateTrace(name, 300, 7);
      expect(generateTrace(name, 300, 7)).toEqual(a);
      expect(generateTrace(name, 300, 8)).not.toEqual(a);
      expect(a.records).toHaveLength(300);
      for (let i = 0; i < a.records.length; i++) {
        const r = a.records[i];
        expect(r?.blockIds.length).toBe(Math.ceil((r?.inputTokens ?? 0) / a.blockTokens));
        if (i > 0)
          expect(r?.timestampMs).toBeGreaterThanOrEqual(a.records[i - 1]?.timestampMs ?? 0);
      }
    },
  );

  it("rag: every prompt starts with the same 2,048-token system prompt", () => {
    const { records } = generateTrace("rag", 200, 1);
    const system = records[0]?.blockIds.slice(0, 32);
    for (const r of records) expect(r.blockIds.slice(0, 32)).toEqual(system);
    const documents = new Set(records.map((r) => r.blockIds[32]));
    expect(documents.size).toBeGreaterThan(10);
    expect(documents.size).toBeLessThan(200);
  });

  it("sessions: each turn's full blocks start the session's next turn", () => {
    const { records } = generateTrace("sessions", 400, 1);
    let continued = 0;
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      const full = r?.blockIds.slice(0, Math.floor((r?.inputTokens ?? 0) / 64)) ?? [];
      const next = records
        .slice(i + 1)
        .find((s) => s.blockIds[16] === full[16] && full.length > 16);
      if (next) {
        expect(next.blockIds.slice(0, full.length)).toEqual(full);
        continued++;
      }
    }
    expect(continued).toBeGreaterThan(200);
  });

  it("no-sharing: no block id appears twice", () => {
    const ids = generateTrace("no-sharing", 300, 1).records.flatMap((r) => r.blockIds);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("rejects an unknown generator", () => {
    expect(() => generateTrace("nope", 1, 1)).toThrow(/known: rag, sessions, no-sharing, agentic/);
  });
});
