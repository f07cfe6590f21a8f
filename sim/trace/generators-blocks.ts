/**
 * What the synthetic generators share: prompts built from 64-token blocks (a shared block id
 * means shared content), fresh ids, appending to a conversation, and interleaving overlapping
 * sessions into one arrival-ordered trace.
 */
import type { TraceRecord } from "./trace.ts";

/** Tokens per block id: one router chunk, so sharing is exact at the router's granularity. */
export const B = 64;
/** Nominal requests per second of every generator; `--load` rescales time anyway. */
export const RATE_PER_SECOND = 4;

/** Hands out fresh block ids; `run(n)` returns n consecutive new ids. */
export function idAllocator() {
  let next = 0;
  return (n: number) => Array.from({ length: n }, () => next++);
}

export function blocksFor(tokens: number): number {
  return Math.ceil(tokens / B);
}

/** A conversation's prompt so far, and when its next turn arrives (ms). */
export interface Conversation {
  next: number;
  tokens: number;
  blockIds: number[];
}

/** Append `added` tokens: full blocks carry over, the partial tail and the new tokens get new ids. */
export function extend(c: Conversation, added: number, ids: (n: number) => number[]): void {
  const keep = Math.floor(c.tokens / B);
  c.tokens += added;
  c.blockIds = [...c.blockIds.slice(0, keep), ...ids(blocksFor(c.tokens) - keep)];
}

/**
 * `count` records of overlapping sessions in arrival order. Sessions open one after another:
 * `open(at)` starts one at `at` and says how long until the next opens; the open session due
 * first then plays `turn(s)`, which returns its record (at `s.next`), moves `s.next` on and
 * says whether the session has ended.
 */
export function interleave<S extends { next: number }>(
  count: number,
  open: (at: number) => { session: S; gapMs: number },
  turn: (s: S) => { record: TraceRecord; ended: boolean },
): TraceRecord[] {
  const records: TraceRecord[] = [];
  const live: S[] = [];
  let nextOpen = 0;
  while (records.length < count) {
    const s = live.reduce<S | null>((a, b) => (a && a.next <= b.next ? a : b), null);
    if (!s || nextOpen < s.next) {
      const { session, gapMs } = open(nextOpen);
      live.push(session);
      nextOpen += gapMs;
      continue;
    }
    const { record, ended } = turn(s);
    records.push(record);
    if (ended) live.splice(live.indexOf(s), 1);
  }
  return records;
}
