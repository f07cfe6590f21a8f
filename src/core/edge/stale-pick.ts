/**
 * How an edge replica turns its policy's decision into the one it acts on, and what it seeds
 * that decision's random draws with (docs/architecture.md, "Scale: two coordination modes").
 *
 * Seed: a hash of the request (`requestSeed`), so every replica breaks a request's ties alike
 * (a per-isolate random stream alone cost ~2% hit rate at zero delay in this simulator). The
 * hash is the request's key past its shared prefix (`keyChunks` chunks after the prefix
 * different prompts share, as the degraded fallback keys: router/fallback-pool.ts), so the
 * turns of one conversation draw alike, and conversations under one system prompt do not.
 *
 * Pick (`pickAmongBest`): with a stale view every replica sees the same origin as the least
 * loaded and sends it everything until the next sync (herding; Mitzenmacher, "How useful is old
 * information?", IEEE TPDS 2000, who shows that the better of two random choices does well on
 * old information where the best of all does badly). So among the policy's best candidates the
 * replica draws two (from the seeded stream) and takes the better:
 *
 * - best candidates: the eligible origins that hold exactly as much of the prompt as the
 *   policy's choice (a cache hit stays on its holders; a replicate or a new prompt may spread),
 *   and whose score is within `margin` of the choice's. `cost`: its score (estimated seconds
 *   to first token plus the price of leaving a cached prefix), margin = the queue the rest of
 *   the pool probably added to one origin while the view was stale, in seconds of prefill:
 *   rho * s, with rho = pool rate x mean prefill work / (origins x mean speed) and s the view's
 *   staleness (its age plus the flush interval, at most `maxStalenessMs`). `least-outstanding`,
 *   `cache-aware`, `hybrid`, `llm-d`, `llm-d-precise`, `dynamo`: requests in flight per unit of
 *   weight, margin = the requests the rest of the pool probably sent one origin meanwhile
 *   (rate x s / origins). `round-robin`, `random`, `power-of-two` and `prefix-hash` do not
 *   read the pool's shared load (or already draw at random): their choice stands.
 * - better of the two: the lower score (the first drawn on a tie).
 * With a fresh view the margin is 0: only exact ties are candidates, broken by the seed.
 */
import type { Decision, OriginView, PolicyContext } from "../policies/policy.ts";
import { prefixKey } from "../policies/rendezvous.ts";
import type { PoolRate } from "./sync-protocol.ts";

/** Policies whose choice reads requests in flight: they herd on a stale view. */
const READS_OUTSTANDING: ReadonlySet<string> = new Set([
  "least-outstanding",
  "cache-aware",
  "hybrid",
  "llm-d",
  "llm-d-precise",
  "dynamo",
]);

/** Requests through a prefix (decayed) before it counts as shared, as the fallback's default. */
export const SHARED_HEAT = 4;

/** How far a candidate may trail the choice: in a score's seconds, or in requests in flight. */
export interface Margin {
  readonly seconds: number;
  readonly requests: number;
}

/** The margin for a view `stalenessMs` old, given the pool's rate. */
export function stalenessMargin(
  rate: PoolRate,
  stalenessMs: number,
  context: PolicyContext,
): Margin {
  let n = 0;
  let speed = 0;
  for (const o of context.origins) {
    if (!o.eligible) continue;
    n++;
    speed += o.prefillTokensPerSecond;
  }
  if (n === 0 || !(stalenessMs > 0)) return { seconds: 0, requests: 0 };
  const s = stalenessMs / 1000;
  const requests = (rate.requestsPerSecond * s) / n;
  return { seconds: (requests * rate.meanPrefillWork) / (speed / n), requests };
}

/**
 * The seed of a request's draws: its key past the shared prefix (and any hot prefix the
 * coordinator named that it starts with), folded to 32 bits.
 */
export function requestSeed(
  context: PolicyContext,
  keyChunks: number,
  hot: readonly { readonly hash: number; readonly depth: number }[],
): number {
  const { chunkHashes, promptTokens, sessionKey } = context.request;
  let shared = Math.floor(context.sharedTokens(SHARED_HEAT) / context.tokensPerChunk);
  for (const h of hot) {
    if (h.depth > shared && chunkHashes[h.depth - 1] === h.hash) shared = h.depth;
  }
  const key = prefixKey(chunkHashes, keyChunks, sessionKey, shared) ?? promptTokens;
  return ((key % 4294967296) ^ Math.floor(key / 4294967296)) | 0;
}

/** The decision a replica acts on: the better of two drawn among the policy's best candidates. */
export function pickAmongBest(
  policy: string,
  context: PolicyContext,
  decision: Decision,
  margin: Margin,
): Decision {
  const chosen = decision.origin;
  if (chosen < 0) return decision;
  const { origins, matchedTokens, rng } = context;
  const scores = decision.scores;
  let score: (i: number) => number;
  let slack: number;
  if (scores) {
    score = (i) => scores[i] as number;
    slack = margin.seconds;
  } else if (READS_OUTSTANDING.has(policy)) {
    score = (i) => (origins[i] as OriginView).outstanding / (origins[i] as OriginView).weight;
    slack = margin.requests;
  } else {
    return decision;
  }
  const held = matchedTokens[chosen];
  const bound = score(chosen) + slack;
  const candidates: number[] = [];
  for (let i = 0; i < origins.length; i++) {
    if ((origins[i] as OriginView).eligible && matchedTokens[i] === held && score(i) <= bound) {
      candidates.push(i);
    }
  }
  if (candidates.length < 2) return decision;
  const k = candidates.length;
  const first = rng.int(k);
  const second = (first + 1 + rng.int(k - 1)) % k;
  const a = candidates[first] as number;
  const b = candidates[second] as number;
  const pick = score(b) < score(a) ? b : a;
  if (pick === chosen) return decision;
  const rest = (decision.ranking ?? []).filter((i) => i !== pick);
  return { origin: pick, reason: decision.reason, ranking: [pick, ...rest], scores };
}
