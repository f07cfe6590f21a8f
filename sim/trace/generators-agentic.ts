/**
 * `synthetic:agentic`: coding-agent sessions (Claude Code, Codex CLI and the like), the traffic
 * that resends the most prefix. No public agentic trace with prefix hashes is in this repository
 * (Mooncake's toolagent trace and the Hugging Face agent traces could not be fetched,
 * research/traces.md sections 4 and 6), so the shape is generated from published figures:
 *
 * - **Shared prefix**: every call starts with the agent's system prompt and tool definitions.
 *   Claude Code sends about 12-15K tokens of tools and 3-6K of system prompt on every call
 *   (semianalysisai/cc-traces-weka-042026, per-trace `tool_tokens` 0.9-17.3K and
 *   `system_tokens` 0.5-7.5K; callanjfox/agentic-coding-analysis's example: tools ~15K +
 *   system ~6K). Three products share the fleet: 16,000, 8,000 and 4,800 tokens, used by 50%,
 *   30% and 20% of sessions (sizes within that range; the mix is an assumption).
 * - **Turns**: 20-60 per session, uniform (mean 40; thoughtworks/agentic-coding-trajectories
 *   averages 41 turns over 15,000 SWE-bench-style sessions). The first prompt adds the task
 *   (log-normal, median 600 tokens: instructions file and request). Each later turn resends the
 *   whole history plus the assistant's last reply (its tool call) and the tool's result.
 * - **Outputs**: short tool calls, long sometimes: 85% log-normal median 60 tokens, 15% median
 *   600 (plans, edits), mean ~180, as Mooncake's toolagent trace (mean output 182 tokens,
 *   FAST'25 README) and TraceLab's "long contexts with short outputs" (arXiv 2606.30560).
 * - **Tool results**: heavy-tailed, from an `ls` to a file read: log-normal median 300 tokens,
 *   sigma 1.5 (p90 ~2,000, p99 ~10,000, mean ~900), cut at 25,000 as agents truncate long
 *   reads (an assumption; TraceLab reports heavy-tailed tool calls without a size law).
 * - **Time between turns**: the model's time (0.5 s + 15 ms per output token, an 8B engine
 *   under batch: an assumption) plus the tool's (log-normal median 1 s, sigma 1.3: reads and
 *   greps under a second, builds and tests tens of seconds, TraceLab's tool-latency tail);
 *   one turn in ten is a human message instead (median 80 tokens) after a human pause
 *   (log-normal median 20 s, sigma 1, the `sessions` generator's user pause).
 * - **Arrivals**: sessions open as a Poisson process at a rate that yields about
 *   RATE_PER_SECOND turns per second (`--load` rescales time, think times included).
 *
 * Scaled down on purpose: TraceLab's Claude Code and Codex steps average ~154K input tokens
 * (54.9B over 357K steps) on frontier models with 200K windows; an 8B engine's 440K-token KV
 * would hold two or three such prompts. Here a session ends near 45K tokens on average (mean
 * prompt ~30K), the size of a self-hosted agent's context. The infinite-cache reuse is ~0.97,
 * close to TraceLab's 0.958 of input tokens read from cache.
 */
import { createRng, type Rng } from "../../src/core/rng.ts";
import { exponential, logNormal } from "./distributions.ts";
import {
  B,
  type Conversation,
  extend,
  idAllocator,
  interleave,
  RATE_PER_SECOND,
} from "./generators-blocks.ts";
import type { TraceRecord } from "./trace.ts";

/** Each agent product's system prompt and tools, in tokens (whole blocks), and its share. */
export const AGENT_PREFIXES: readonly { tokens: number; share: number }[] = [
  { tokens: 16_000, share: 0.5 },
  { tokens: 8_000, share: 0.3 },
  { tokens: 4_800, share: 0.2 },
];
export const MIN_TURNS = 20;
export const MAX_TURNS = 60;
const LONG_OUTPUT_SHARE = 0.15;
const HUMAN_TURN_SHARE = 0.1;
const TOOL_RESULT_CAP = 25_000;

/** One generated call: which session, which turn of it (0-based) of how many, the request. */
export interface AgenticTurn {
  session: number;
  turn: number;
  of: number;
  record: TraceRecord;
}

interface AgentSession extends Conversation {
  id: number;
  turn: number;
  turns: number;
}

function pickPrefix(rng: Rng): number {
  let u = rng.next();
  for (let i = 0; i < AGENT_PREFIXES.length - 1; i++) {
    u -= (AGENT_PREFIXES[i] as { share: number }).share;
    if (u < 0) return i;
  }
  return AGENT_PREFIXES.length - 1;
}

/** The calls of `synthetic:agentic` with their session and turn, in arrival order. */
export function agenticTurns(count: number, seed: number): AgenticTurn[] {
  const rng = createRng(seed);
  const ids = idAllocator();
  const prefixes = AGENT_PREFIXES.map((p) => ids(p.tokens / B));
  const meanTurns = (MIN_TURNS + MAX_TURNS) / 2;
  const turns: AgenticTurn[] = [];
  let opened = 0;
  interleave<AgentSession>(
    count,
    (at) => {
      const p = pickPrefix(rng);
      const session: AgentSession = {
        id: opened++,
        next: at,
        turn: 0,
        turns: MIN_TURNS + Math.floor(rng.next() * (MAX_TURNS - MIN_TURNS + 1)),
        tokens: (AGENT_PREFIXES[p] as { tokens: number }).tokens,
        blockIds: prefixes[p] as number[],
      };
      extend(session, logNormal(rng, 600, 0.8, 16), ids);
      return { session, gapMs: exponential(rng, (1000 * meanTurns) / RATE_PER_SECOND) };
    },
    (s) => {
      const long = rng.next() < LONG_OUTPUT_SHARE;
      const outputTokens = long ? logNormal(rng, 600, 0.7, 16) : logNormal(rng, 60, 0.7, 8);
      const record = {
        timestampMs: s.next,
        inputTokens: s.tokens,
        outputTokens,
        blockIds: s.blockIds,
      };
      turns.push({ session: s.id, turn: s.turn, of: s.turns, record });
      let thinkMs = 500 + 15 * outputTokens;
      let added = outputTokens;
      if (rng.next() < HUMAN_TURN_SHARE) {
        added += logNormal(rng, 80, 0.8, 4);
        thinkMs += logNormal(rng, 20_000, 1.0);
      } else {
        added += Math.min(TOOL_RESULT_CAP, logNormal(rng, 300, 1.5, 4));
        thinkMs += logNormal(rng, 1_000, 1.3);
      }
      extend(s, added, ids);
      s.next += thinkMs;
      return { record, ended: ++s.turn === s.turns };
    },
  );
  return turns;
}

/** `count` calls of coding-agent sessions (the header says what they are made of). */
export function agentic(count: number, seed: number): TraceRecord[] {
  return agenticTurns(count, seed).map((t) => t.record);
}
