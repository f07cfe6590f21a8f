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
 * - agentic: coding-agent sessions, 20-60 calls each over a long shared system prompt and tool
 *   list, each resending the history plus a tool call and its result (generators-agentic.ts).
 *
 * Blocks, ids and session interleaving shared with generators-agentic.ts: generators-blocks.ts.
 */
import { createRng } from "../../src/core/rng.ts";
import { exponential, logNormal, zipf } from "./distributions.ts";
import { agentic } from "./generators-agentic.ts";
import {
  B,
  blocksFor,
  type Conversation,
  extend,
  idAllocator,
  interleave,
  RATE_PER_SECOND,
} from "./generators-blocks.ts";
import type { Trace, TraceRecord } from "./trace.ts";

type Generator = (count: number, seed: number) => TraceRecord[];

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

function sessions(count: number, seed: number): TraceRecord[] {
  const rng = createRng(seed);
  const ids = idAllocator();
  const systems = Array.from({ length: 20 }, () => ids(1024 / B));
  const pickSystem = zipf(systems.length, 1.0);
  const meanTurns = 6;
  return interleave<Conversation & { turnsLeft: number }>(
    count,
    (at) => {
      const system = systems[pickSystem(rng)] as number[];
      // Geometric number of turns with mean `meanTurns`, at least one.
      const turns = 1 + Math.floor(Math.log(1 - rng.next()) / Math.log(1 - 1 / meanTurns));
      const session = { next: at, turnsLeft: turns, tokens: 1024, blockIds: system };
      // Sessions open at a rate that yields about RATE_PER_SECOND turns per second.
      return { session, gapMs: exponential(rng, (1000 * meanTurns) / RATE_PER_SECOND) };
    },
    (s) => {
      extend(s, logNormal(rng, 150, 0.8, 8), ids);
      const record = {
        timestampMs: s.next,
        inputTokens: s.tokens,
        outputTokens: logNormal(rng, 250, 0.7),
        blockIds: s.blockIds,
      };
      extend(s, record.outputTokens, ids);
      s.next += exponential(rng, 20_000);
      return { record, ended: --s.turnsLeft === 0 };
    },
  );
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
  agentic,
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
