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

/**
 * What the rest of the pool probably routed that this replica's view does not show yet: for a
 * view `stalenessMs` old, the pool's rate times that, in requests and in prefill work.
 */
export interface Unseen {
  readonly requests: number;
  /** Prefill work (short-context token equivalents, prefill-work.ts). */
  readonly work: number;
}

export function unseenSince(rate: PoolRate, stalenessMs: number): Unseen {
  if (!(stalenessMs > 0)) return { requests: 0, work: 0 };
  const requests = (rate.requestsPerSecond * stalenessMs) / 1000;
  return { requests, work: requests * rate.meanPrefillWork };
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

/**
 * The decision a replica acts on: drawn among the policy's best candidates in proportion to the
 * share of the unseen traffic a central router would have given each (water-filling).
 */
export function pickAmongBest(
  policy: string,
  context: PolicyContext,
  decision: Decision,
  unseen: Unseen,
): Decision {
  const chosen = decision.origin;
  if (chosen < 0) return decision;
  const { origins, matchedTokens, rng } = context;
  const scores = decision.scores;
  let level: (i: number) => number;
  let room: (i: number) => number;
  let amount: number;
  if (scores) {
    // Seconds to first token; an origin takes work at its prefill speed.
    level = (i) => scores[i] as number;
    room = (i) => (origins[i] as OriginView).prefillTokensPerSecond;
    amount = unseen.work;
  } else if (READS_OUTSTANDING.has(policy)) {
    level = (i) => (origins[i] as OriginView).outstanding / (origins[i] as OriginView).weight;
    room = (i) => (origins[i] as OriginView).weight;
    amount = unseen.requests;
  } else {
    return decision;
  }
  if (!(amount > 0)) return decision;
  const held = matchedTokens[chosen];
  const candidates: number[] = [];
  for (let i = 0; i < origins.length; i++) {
    if ((origins[i] as OriginView).eligible && matchedTokens[i] === held) candidates.push(i);
  }
  if (candidates.length < 2) return decision;
  candidates.sort((a, b) => level(a) - level(b));
  // The water level L: the unseen amount fills the lowest origins up to L (sum of (L - level)
  // x room over those below it equals the amount).
  let filled = 0;
  let width = 0;
  let top = 0;
  for (const i of candidates) {
    const l = level(i);
    if (width > 0 && (filled + amount) / width <= l) break;
    filled += l * room(i);
    width += room(i);
    top++;
  }
  const water = (filled + amount) / width;
  let draw = rng.next() * amount;
  let pick = candidates[0] as number;
  for (let k = 0; k < top; k++) {
    const i = candidates[k] as number;
    pick = i;
    draw -= (water - level(i)) * room(i);
    if (draw < 0) break;
  }
  if (pick === chosen) return decision;
  const rest = (decision.ranking ?? []).filter((i) => i !== pick);
  return { origin: pick, reason: decision.reason, ranking: [pick, ...rest], scores };
}
