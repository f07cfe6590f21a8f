/**
 * Seeded synthetic workloads, for shapes the public traces lack. Prompts are built from 64-token
 * blocks; a shared block id means shared content, so sharing is exactly what each generator
 * says. Arrivals are Poisson at a nominal rate that `--load` rescales anyway.
 *
 * - rag: every request starts with one hot 2,048-token system prompt, then one of 1,000
 *   4,096-token documents drawn with Zipf(1.0) popularity, then its own question. The hot
 *   prefix that stick-by-prefix policies pile onto one origin.
 * - sessions: multi-turn chats. Sessions open as a Poisson process; each uses one of 20 shared
 *   1,024-token system prompts (Zipf 1.0) and runs a geometric number of turns (mean 6), a user
 *   pause (mean 20 s) apart; each turn's prompt is the whole conversation so far.
 * - no-sharing: independent prompts with the Azure conversation trace's length shape (median
 *   1,020 prompt and 129 output tokens); no two requests share a block.
 */
import { createRng } from "../../src/core/rng.ts";
import { exponential, logNormal, zipf } from "./distributions.ts";
import type { Trace, TraceRecord } from "./trace.ts";

/** Tokens per block id: one router chunk, so sharing is exact at the router's granularity. */
const B = 64;
const RATE_PER_SECOND = 4;

type Generator = (count: number, seed: number) => TraceRecord[];

/** Hands out fresh block ids; `run(n)` returns n consecutive new ids. */
function idAllocator() {
  let next = 0;
  return (n: number) => Array.from({ length: n }, () => next++);
}

function blocksFor(tokens: number): number {
  return Math.ceil(tokens / B);
}

function rag(count: number, seed: number): TraceRecord[] {
  const rng = createRng(seed);
  const ids = idAllocator();
  const system = ids(2048 / B);
  const documents = Array.from({ length: 1000 }, () => ids(4096 / B));
  const pick = zipf(documents.length, 1.0);
  const records: TraceRecord[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += exponential(rng, 1000 / RATE_PER_SECOND);
    const question = logNormal(rng, 200, 0.6, 16);
    const document = documents[pick(rng)] as number[];
    records.push({
      timestampMs: t,
      inputTokens: 2048 + 4096 + question,
      outputTokens: logNormal(rng, 150, 0.7),
      blockIds: [...system, ...document, ...ids(blocksFor(question))],
    });
  }
  return records;
}

interface Session {
  next: number;
  turnsLeft: number;
  tokens: number;
  blockIds: number[];
}

/** Append `added` tokens: full blocks carry over, the partial tail and the new tokens get new ids. */
function extend(s: Session, added: number, ids: (n: number) => number[]): void {
  const keep = Math.floor(s.tokens / B);
  s.tokens += added;
  s.blockIds = [...s.blockIds.slice(0, keep), ...ids(blocksFor(s.tokens) - keep)];
}

function sessions(count: number, seed: number): TraceRecord[] {
  const rng = createRng(seed);
  const ids = idAllocator();
  const systems = Array.from({ length: 20 }, () => ids(1024 / B));
  const pickSystem = zipf(systems.length, 1.0);
  const meanTurns = 6;
  const records: TraceRecord[] = [];
  const open: Session[] = [];
  let nextOpen = 0;
  while (records.length < count) {
    const s = open.reduce<Session | null>((a, b) => (a && a.next <= b.next ? a : b), null);
    if (!s || nextOpen < s.next) {
      const system = systems[pickSystem(rng)] as number[];
      // Geometric number of turns with mean `meanTurns`, at least one.
      const turns = 1 + Math.floor(Math.log(1 - rng.next()) / Math.log(1 - 1 / meanTurns));
      open.push({ next: nextOpen, turnsLeft: turns, tokens: 1024, blockIds: system });
      // Sessions open at a rate that yields about RATE_PER_SECOND turns per second.
      nextOpen += exponential(rng, (1000 * meanTurns) / RATE_PER_SECOND);
      continue;
    }
    extend(s, logNormal(rng, 150, 0.8, 8), ids);
    records.push({
      timestampMs: s.next,
      inputTokens: s.tokens,
      outputTokens: logNormal(rng, 250, 0.7),
      blockIds: s.blockIds,
    });
    extend(s, (records.at(-1) as TraceRecord).outputTokens, ids);
    s.next += exponential(rng, 20_000);
    if (--s.turnsLeft === 0) open.splice(open.indexOf(s), 1);
  }
  return records;
}

function noSharing(count: number, seed: number): TraceRecord[] {
  const rng = createRng(seed);
  const ids = idAllocator();
  const records: TraceRecord[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += exponential(rng, 1000 / RATE_PER_SECOND);
    const input = logNormal(rng, 1020, 0.8, 8);
    records.push({
      timestampMs: t,
      inputTokens: input,
      outputTokens: logNormal(rng, 129, 1.0),
      blockIds: ids(blocksFor(input)),
    });
  }
  return records;
}

export const GENERATORS: Readonly<Record<string, Generator>> = {
  rag,
  sessions,
  "no-sharing": noSharing,
};

export function generateTrace(name: string, count: number, seed: number): Trace {
  const generate = GENERATORS[name];
  if (!generate) {
    throw new Error(
      `unknown synthetic workload "${name}"; known: ${Object.keys(GENERATORS).join(", ")}`,
    );
  }
  return { name: `synthetic:${name}`, blockTokens: B, records: generate(count, seed) };
}
