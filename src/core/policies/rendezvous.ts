/**
 * Weighted rendezvous (highest-random-weight) hashing, shared by prefix-hash, hybrid and the
 * Worker's fallback. Every origin scores the key; the highest score wins, and the full order is
 * the failover order. Removing an origin moves only the keys it owned (Thaler & Ravishankar 1998);
 * weights use the logarithmic method (score = -w / ln u), so an origin of weight 2 takes twice the
 * keys of one of weight 1.
 */
import { chainHash, seedHash } from "../chunk-hash.ts";

const TWO_POW_53 = 9007199254740992;
const idHashes = new Map<string, number>();

function idHash(id: string): number {
  let h = idHashes.get(id);
  if (h === undefined) {
    h = seedHash(`origin:${id}`);
    idHashes.set(id, h);
  }
  return h;
}

/** Rendezvous score of `key` on the origin named `id`; higher wins. */
export function rendezvousScore(key: number, id: string, weight: number): number {
  const u = (chainHash(key, idHash(id)) + 1) / (TWO_POW_53 + 1);
  return -weight / Math.log(u);
}

/** Candidates ordered by descending rendezvous score for `key`. */
export function rendezvousOrder(
  key: number,
  candidates: readonly number[],
  idOf: (i: number) => { id: string; weight: number },
): number[] {
  return candidates
    .map((i) => {
      const o = idOf(i);
      return { i, s: rendezvousScore(key, o.id, o.weight) };
    })
    .sort((a, b) => b.s - a.s)
    .map((e) => e.i);
}

/**
 * The routing key of a request: the chained hash covering its first `skipChunks` +
 * `prefixChunks` chunks (as many as it has), so requests that agree on those chunks share a
 * key. Skipping a prefix that many prompts share (a system prompt) keys each conversation on
 * its own first chunks; null for a prompt with no full chunk.
 */
export function prefixKey(
  hashes: ArrayLike<number>,
  prefixChunks: number,
  sessionKey: string | undefined,
  skipChunks = 0,
): number | null {
  if (sessionKey !== undefined) return seedHash(`session:${sessionKey}`);
  if (hashes.length === 0) return null;
  return hashes[Math.min(skipChunks + prefixChunks, hashes.length) - 1] as number;
}
