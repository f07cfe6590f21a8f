/**
 * Which prefill origin prefills a disaggregated request: the one that will have it prefilled
 * soonest, by the router's own estimate,
 *   time_p = (Q_p + W(m_p)) / S_p
 * with Q_p the prefill work queued there (the load board's fluid queue), m_p the prompt tokens
 * it holds, W the attention-weighted work of prefilling the rest (prefill-work.ts) and S_p its
 * prefill speed. Ties go to the longer match, then at random. O(candidates).
 *
 * Why not llm-d's prefill profile (2 x prefix fraction + 1 x queue, min-max normalised) or the
 * pool's policy: a prefill origin does one thing, so the time it takes to do it is the whole
 * objective, in one unit; llm-d's normalised sum cannot weigh a 2K-token hit against a
 * 30-second queue, and the pool's policy is chosen for decode (round-robin, say, ignores the
 * cache that makes a prefill cheap). It is the `cost` policy's TTFT term without its price on
 * moving: the decode origin keeps the conversation's locality, so a prefill may go wherever it
 * is done first.
 */
import type { Slot } from "../origin-indexes.ts";
import { type Compare, pickMin } from "../policies/pick.ts";
import { prefillWork } from "../prefill-work.ts";
import type { Rng } from "../rng.ts";

/** An eligible prefill origin as the choice sees it. */
export interface PrefillCandidate {
  readonly slot: Slot;
  /** Prompt tokens it is believed to hold already. */
  readonly matchedTokens: number;
  /** Prefill work queued there, in short-context token equivalents (load-board.ts). */
  readonly queuedPrefillTokens: number;
  readonly prefillTokensPerSecond: number;
}

export interface PrefillChoice {
  readonly candidate: PrefillCandidate;
  /** How long its queue is before this prompt, in milliseconds (the busy test's input). */
  readonly queueMs: number;
}

/** The candidate that prefills the prompt soonest; null when there is none. */
export function choosePrefill(
  candidates: readonly PrefillCandidate[],
  promptTokens: number,
  attentionTokens: number,
  rng: Rng,
): PrefillChoice | null {
  if (candidates.length === 0) return null;
  const time = candidates.map(
    (c) =>
      (c.queuedPrefillTokens + prefillWork(c.matchedTokens, promptTokens, attentionTokens)) /
      c.prefillTokensPerSecond,
  );
  const match = (i: number) => (candidates[i] as PrefillCandidate).matchedTokens;
  const compare: Compare = (a, b) =>
    (time[a] as number) - (time[b] as number) || match(b) - match(a);
  const best = pickMin([...candidates.keys()], compare, rng);
  const candidate = candidates[best] as PrefillCandidate;
  return {
    candidate,
    queueMs: (candidate.queuedPrefillTokens / candidate.prefillTokensPerSecond) * 1000,
  };
}
