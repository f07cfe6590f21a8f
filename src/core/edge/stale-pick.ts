/**
 * How an edge replica turns its policy's decision into the one it acts on, and what it seeds
 * that decision's random draws with (docs/architecture.md, "Edge coordination").
 *
 * Seed: a hash of the request (`requestSeed`), so every replica breaks a request's ties alike
 * (a per-isolate random stream alone cost ~2% hit rate at zero delay in this simulator). The
 * hash is the request's key past its shared prefix (`keyChunks` chunks after the prefix
 * different prompts share, as the degraded fallback keys: router/fallback-pool.ts), so the
 * turns of one conversation draw alike, and conversations under one system prompt do not.
 *
 * Pick (`pickAmongBest`): with a stale view every replica sees the same origin as the least
 * loaded and sends it everything until the next sync (herding; Mitzenmacher, "How useful is old
 * information?", IEEE TPDS 2000). So among the policy's best candidates (the eligible origins
 * that hold exactly as much of the prompt as its choice: a cache hit stays on its holders) the
 * replica draws in proportion to the share a central router would have given each of what the
 * rest of the pool probably routed while the view was stale (water-filling, `Unseen`). A policy
 * that returns scores (`cost`): levels are its scores (seconds), the amount is prefill work;
 * one that takes the least loaded (its registered `load` trait is "least": policies/traits.ts):
 * requests in flight per weight; the others (round robin, random, power of two, prefix hash)
 * keep their choice. With a fresh view the amount is 0 and the choice stands.
 *
 * Alone (`pickAlone`): once the replica's coordinator has not answered for longer than
 * `maxStalenessMs`, the vector no longer says where load is and the other isolates' claims
 * since are unseen. A request whose prompt this replica knows no origin to hold past its
 * shared prefix then goes where its key hashes (rendezvous), skipping origins this replica
 * sees above `ALONE_BOUND` x the mean in flight: every isolate sends a conversation's turns to
 * one origin without sharing state, as object mode's fallback (prefix-hash past the shared
 * prefix) does.
 */
import type { Decision, OriginView, PolicyContext } from "../policies/policy.ts";
import { prefixKey, rendezvousOrder } from "../policies/rendezvous.ts";
import type { PolicyTraits } from "../policies/traits.ts";
import type { PoolRate } from "./sync-protocol.ts";

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
  hot: readonly HotPrefix[],
): number {
  const key = requestKey(context, keyChunks, hot).key;
  return ((key % 4294967296) ^ Math.floor(key / 4294967296)) | 0;
}

interface HotPrefix {
  readonly hash: number;
  readonly depth: number;
}

/** The request's key past its shared (or hot) prefix, and that prefix's length in chunks. */
function requestKey(
  context: PolicyContext,
  keyChunks: number,
  hot: readonly HotPrefix[],
): { key: number; shared: number } {
  const { chunkHashes, promptTokens, sessionKey } = context.request;
  let shared = Math.floor(context.sharedTokens(SHARED_HEAT) / context.tokensPerChunk);
  for (const h of hot) {
    if (h.depth > shared && chunkHashes[h.depth - 1] === h.hash) shared = h.depth;
  }
  return { key: prefixKey(chunkHashes, keyChunks, sessionKey, shared) ?? promptTokens, shared };
}

/** In flight on an origin, over the eligible mean, past which routing alone skips it. */
export const ALONE_BOUND = 1.25;

/** Routing alone (see the header): the key's origin unless a private match or its load says not. */
export function pickAlone(
  context: PolicyContext,
  decision: Decision,
  keyChunks: number,
  hot: readonly HotPrefix[],
): Decision {
  const chosen = decision.origin;
  if (chosen < 0) return decision;
  const { origins, matchedTokens } = context;
  const { key, shared } = requestKey(context, keyChunks, hot);
  // This replica knows where the prompt is cached past its shared part: keep the policy's hold.
  if ((matchedTokens[chosen] as number) > shared * context.tokensPerChunk) return decision;
  const eligible: number[] = [];
  let inFlight = 0;
  for (let i = 0; i < origins.length; i++) {
    const o = origins[i] as OriginView;
    if (!o.eligible) continue;
    eligible.push(i);
    inFlight += o.outstanding / o.weight;
  }
  const bound = ALONE_BOUND * (inFlight / Math.max(1, eligible.length)) + 1;
  const order = rendezvousOrder(key, eligible, (i) => origins[i] as OriginView);
  const pick =
    order.find(
      (i) => (origins[i] as OriginView).outstanding / (origins[i] as OriginView).weight <= bound,
    ) ?? (order[0] as number);
  if (pick === chosen) return decision;
  const rest = (decision.ranking ?? []).filter((i) => i !== pick);
  return {
    origin: pick,
    reason: decision.reason,
    ranking: [pick, ...rest],
    scores: decision.scores,
  };
}

/**
 * The decision a replica acts on: drawn among the policy's best candidates in proportion to the
 * share of the unseen traffic a central router would have given each (water-filling). `load`
 * is the policy's registered trait (policies/traits.ts).
 */
export function pickAmongBest(
  load: PolicyTraits["load"],
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
  } else if (load === "least") {
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
