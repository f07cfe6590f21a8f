import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkHashesOf } from "../workload/chunk-hashes.ts";
import { generateTrace } from "./generators.ts";
import {
  AGENT_PREFIXES,
  type AgenticTurn,
  agenticTurns,
  MAX_TURNS,
  MIN_TURNS,
} from "./generators-agentic.ts";
import { B } from "./generators-blocks.ts";

/** The router's chunk hashes of a call (64-token chunks, as the Worker hashes by default). */
function hashes(t: AgenticTurn): number[] {
  const out = new Float64Array(t.record.blockIds.length);
  const n = chunkHashesOf(t.record.blockIds, B, t.record.inputTokens, 64, 7, out);
  return [...out.subarray(0, n)];
}

function bySession(turns: readonly AgenticTurn[]): Map<number, AgenticTurn[]> {
  const sessions = new Map<number, AgenticTurn[]>();
  for (const t of turns) sessions.set(t.session, [...(sessions.get(t.session) ?? []), t]);
  return sessions;
}

const quantile = (xs: readonly number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] as number;

/** About 200 sessions, most of them whole. */
const SESSIONS = agenticTurns(8000, 3);

describe("synthetic:agentic", () => {
  it("each turn's chunk hashes extend the previous turn's in its session", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        for (const turns of bySession(agenticTurns(400, seed)).values()) {
          for (let i = 1; i < turns.length; i++) {
            const before = hashes(turns[i - 1] as AgenticTurn);
            const after = hashes(turns[i] as AgenticTurn);
            expect(after.length).toBeGreaterThanOrEqual(before.length);
            expect(after.slice(0, before.length)).toEqual(before);
          }
        }
      }),
      { numRuns: 5 },
    );
  });

  it("sessions run their turns in order, 20 to 60 of them, spread over that range", () => {
    const turns = SESSIONS;
    const lengths: number[] = [];
    for (const session of bySession(turns).values()) {
      expect(session.map((t) => t.turn)).toEqual(session.map((_, i) => i));
      const of = (session[0] as AgenticTurn).of;
      expect(of).toBeGreaterThanOrEqual(MIN_TURNS);
      expect(of).toBeLessThanOrEqual(MAX_TURNS);
      for (const t of session) expect(t.of).toBe(of);
      if (session.length === of) lengths.push(of);
    }
    expect(lengths.length).toBeGreaterThan(100);
    expect(Math.min(...lengths)).toBeLessThan(25);
    expect(Math.max(...lengths)).toBeGreaterThan(55);
  });

  it("sessions of one agent share its whole system prompt and tools, and nothing more", () => {
    const turns = SESSIONS;
    // Sessions' own blocks are fresh, so calls sharing a first block share one agent's prefix.
    const groups = new Map<number, { calls: number[][]; sessions: Set<number> }>();
    for (const t of turns) {
      const g = groups.get(t.record.blockIds[0] as number) ?? { calls: [], sessions: new Set() };
      g.calls.push([...t.record.blockIds]);
      g.sessions.add(t.session);
      groups.set(t.record.blockIds[0] as number, g);
    }
    expect(groups.size).toBe(AGENT_PREFIXES.length);
    const sessions = new Set(turns.map((t) => t.session)).size;
    const found = [...groups.values()].map((g) => {
      const first = g.calls[0] as number[];
      let common = first.length;
      for (const call of g.calls) {
        let i = 0;
        while (i < common && call[i] === first[i]) i++;
        common = i;
      }
      return { tokens: common * B, share: g.sessions.size / sessions };
    });
    found.sort((x, y) => y.tokens - x.tokens);
    found.forEach((f, k) => {
      const p = AGENT_PREFIXES[k] as { tokens: number; share: number };
      expect(f.tokens).toBe(p.tokens);
      // 50/30/20 over ~200 sessions: each share within 0.12 of its target.
      expect(Math.abs(f.share - p.share)).toBeLessThan(0.12);
    });
  });

  it("outputs are mostly short tool calls; tool results are heavy-tailed and capped", () => {
    const turns = SESSIONS;
    const outputs = turns.map((t) => t.record.outputTokens);
    expect(quantile(outputs, 0.5)).toBeLessThan(120);
    expect(quantile(outputs, 0.95)).toBeGreaterThan(400);
    const appended: number[] = [];
    for (const session of bySession(turns).values()) {
      for (let i = 1; i < session.length; i++) {
        const a = (session[i - 1] as AgenticTurn).record;
        const b = (session[i] as AgenticTurn).record;
        appended.push(b.inputTokens - a.inputTokens - a.outputTokens);
        expect(b.timestampMs - a.timestampMs).toBeGreaterThanOrEqual(500);
      }
    }
    expect(quantile(appended, 0.5)).toBeLessThan(600);
    expect(quantile(appended, 0.99)).toBeGreaterThan(5000);
    expect(Math.max(...appended)).toBeLessThanOrEqual(25_000);
  });

  it("is deterministic per seed and differs between seeds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const a = generateTrace("agentic", 200, seed);
        expect(generateTrace("agentic", 200, seed)).toEqual(a);
        expect(generateTrace("agentic", 200, seed + 1)).not.toEqual(a);
      }),
      { numRuns: 5 },
    );
  });
});
