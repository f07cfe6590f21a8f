/**
 * cost (ours, the default): send the request where it will see its first token soonest, and
 * charge for the locality a move throws away, more so when the fleet is busy.
 *
 * For each eligible origin o, with S_o its prefill speed, m_o the prompt tokens it holds, W(m)
 * the prefill work of the prompt given m cached tokens (attention-weighted: prefill-work.ts),
 * Q_o the router's estimate of prefill work queued there, K_o the prompt tokens of the requests
 * it has in flight (their KV, the router's own accounting), m* the longest match anywhere and h
 * the hot part of the prompt (tokens on prefixes at least `hotHeat` requests shared lately):
 *   ttft_o   = (Q_o + W(m_o)) / S_o                    wait for its queue, then our own prefill
 *   price_o  = a * (W(max(m_o, h)) - W(m*)) / S_o      the private locality a move leaves behind
 *   a        = affinityPrice + loadAffinity * mean(Q) / prompt
 *   decode_o = decodeWeight * K_o / S_o                the decode load we would join, counted
 *                                                      only while m* <= h (no private prefix held)
 * and the lowest ttft_o + price_o + decode_o wins; ties go to the longer match, then the fewer
 * requests in flight, then at random. O(n) plus one index lookup for h. The decision carries
 * each origin's score (seconds), which an edge replica's picker reads (src/core/edge/stale-pick.ts).
 *
 * Why the price: a greedy TTFT minimiser moves a conversation to an idle origin to save a few
 * milliseconds, splitting its cache for every later turn and filling a second origin with a
 * copy. The price makes a move worth it only when the holder's queue costs more than
 * (1 + a) times recomputing the prefix elsewhere. It grows with the fleet's backlog (measured in
 * prompts of this size): when every origin is busy, recomputed work delays everyone behind it,
 * so locality is worth more (the benchmark's overloaded runs gained 20-30% p99 from it).
 * A hot shared prefix (a system prompt, a popular document) is not priced: copying it to another
 * origin serves many later requests there, so it replicates as soon as its holder's queue is
 * longer than the recompute, and one hot prefix cannot pile its traffic onto one origin.
 *
 * Why the decode term: Q_o sees only prefill. Every request in flight also holds KV and joins
 * every iteration until its last token, so an origin's in-flight KV slows its decodes, leaves
 * less room for new requests and for cached prefixes, and (in a P/D pool) is a decode origin's
 * only load: one fed remote prefills has no prefill queue, and without this term the holder of
 * a shared prefix won every request (bench/sim/README.md, P/D). Its weight is measured, not
 * derived (one memory-bound iteration reads each token's KV for about 0.0014 of a token's
 * prefill on the 8B profile; a request's whole decode, some 300 iterations, for about 0.5): on
 * the capacity benchmark 0.05 beat 0.005, 0.02 and 0.15 (conversation 8 origins 7.51 -> 7.71
 * requests/s at p90 2 s, 16 origins 17.27 -> 17.49, synthetic 8.54 -> 8.65; conditional P/D's
 * p90 TTFT 1.39x -> 1.19x aggregated). It is the router's own count of what it sent, so
 * requests it did not route are not in it.
 * It places work and never moves a session: where some origin holds a private prefix of the
 * request (m* > h, a conversation's history), the term is dropped and only the prefill queue can
 * move it. A move does not shed decode load (the session's decodes go with it) but recomputes
 * the history elsewhere, keeps a second copy in KV and stalls the new origin's decodes behind
 * that prefill; on coding-agent sessions (~32K-token histories) the term moved 8% of turns and
 * prefilled 37% more than SGLang's cache-aware, which never moves a session (bench/sim/README.md,
 * Coding-agent sessions).
 *
 * Parameters:
 * - affinityPrice: 0..100, default 3.
 * - loadAffinity: 0..100, default 1.
 * - hotHeat: requests through a prefix (decayed, half-life 60 s) that make it hot, 1..1e6,
 *   default 4.
 * - decodeWeight: prefill tokens charged per in-flight prompt token, 0..100, default 0.05
 *   (0 drops the term).
 */
import { z } from "zod";
import { prefillWork } from "../prefill-work.ts";
import { type Compare, pickMin, rankWith } from "./pick.ts";
import { type OriginView, overEligible, type Policy } from "./policy.ts";

/** decodeWeight's default; admission's wait estimate uses it too (router/pool-wait.ts). */
export const DEFAULT_DECODE_WEIGHT = 0.05;

export const costParams = z
  .object({
    type: z.literal("cost"),
    affinityPrice: z.number().min(0).max(100).default(3),
    loadAffinity: z.number().min(0).max(100).default(1),
    hotHeat: z.number().min(1).max(1e6).default(4),
    decodeWeight: z.number().min(0).max(100).default(DEFAULT_DECODE_WEIGHT),
  })
  .strict();
export type CostParams = z.infer<typeof costParams>;

export function createCost(params: CostParams): Policy {
  return overEligible("cost", (context, eligible) => {
    const { origins, request, matchedTokens, attentionTokens, rng } = context;
    let best = 0;
    let queued = 0;
    for (const i of eligible) {
      best = Math.max(best, matchedTokens[i] ?? 0);
      queued += (origins[i] as OriginView).queuedPrefillTokens;
    }
    const backlog = queued / eligible.length / Math.max(1, request.promptTokens);
    const affinity = params.affinityPrice + params.loadAffinity * backlog;
    const hot = best > 0 ? context.hotTokens(params.hotHeat) : 0;
    const work = (matched: number) => prefillWork(matched, request.promptTokens, attentionTokens);
    const bestWork = work(best);
    const decodeWeight = best > hot ? 0 : params.decodeWeight;
    const score: number[] = new Array(origins.length).fill(0);
    for (const i of eligible) {
      const o = origins[i] as OriginView;
      const matched = matchedTokens[i] ?? 0;
      const price = affinity * Math.max(0, work(Math.max(matched, hot)) - bestWork);
      const decode = decodeWeight * o.activeTokens;
      score[i] =
        (o.queuedPrefillTokens + work(matched) + price + decode) / o.prefillTokensPerSecond;
    }
    // Lower score, then the longer match, then fewer requests in flight; then at random.
    const compare: Compare = (a, b) =>
      (score[a] as number) - (score[b] as number) ||
      (matchedTokens[b] ?? 0) - (matchedTokens[a] ?? 0) ||
      (origins[a] as OriginView).outstanding - (origins[b] as OriginView).outstanding;
    const origin = pickMin(eligible, compare, rng);
    const matched = matchedTokens[origin] ?? 0;
    const reason = best === 0 ? "least-ttft" : matched === best ? "cache-hit" : "replicate";
    return { origin, reason, ranking: rankWith(eligible, compare), scores: score };
  });
}
