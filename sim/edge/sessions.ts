/**
 * Which isolate serves each request of a replay.
 *
 * Users: traces carry no user ids, so a request's user is its first chunk past the prefix the
 * workload's requests commonly share (a chunk hash at least 5% of requests hold at that depth:
 * the conversation trace's 512-token block every request starts with, a synthetic system
 * prompt). A conversation's turns extend one another, so they share that chunk and one user;
 * prompts that share only a system prompt do not.
 *
 * Colo: each user has a home colo (a hash of the user); a request goes there with probability
 * `coloStickiness` (p), else to a colo drawn at random: travel, a VPN, anycast moving.
 * Isolate within the colo: with probability `isolateStickiness` the user's own isolate there (a
 * hash of user and colo), else one at random. Cloudflare promises no stickiness: a request
 * lands on whichever machine and isolate the colo's balancer picks, and a client that reuses
 * its connection may hit the same isolate again, but OpenAI's SDKs drop idle connections within
 * seconds, so between a conversation's turns random is closer (the default, 0). Seeded: one
 * seed gives one assignment.
 */

import { chainHash } from "../../src/core/chunk-hash.ts";
import { createRng } from "../../src/core/rng.ts";
import { hashesOf, type Workload } from "../workload/workload.ts";
import type { Topology } from "./topology.ts";

/** A chunk hash this share of requests hold at its depth is part of the common prefix. */
const COMMON_SHARE = 0.05;
/** Depths examined for a common prefix (4,096 tokens at 64 tokens per chunk). */
const MAX_COMMON_DEPTH = 64;

export interface Stickiness {
  /** Probability a request goes to its user's home colo. */
  colo: number;
  /** Probability a request goes to its user's own isolate in the colo it reached. */
  isolate: number;
}

/** Each request's user: its first chunk hash past the commonly shared prefix. */
export function usersOf(w: Workload): Float64Array {
  const counts = new Map<number, number>();
  for (let i = 0; i < w.size; i++) {
    const hashes = hashesOf(w, i);
    for (let d = 0; d < Math.min(MAX_COMMON_DEPTH, hashes.length); d++) {
      const h = hashes[d] as number;
      counts.set(h, (counts.get(h) ?? 0) + 1);
    }
  }
  const common = COMMON_SHARE * w.size;
  const users = new Float64Array(w.size);
  for (let i = 0; i < w.size; i++) {
    const hashes = hashesOf(w, i);
    let d = 0;
    while (d < hashes.length - 1 && (counts.get(hashes[d] as number) ?? 0) >= common) d++;
    users[i] = hashes.length > 0 ? (hashes[d] as number) : chainHash(1, i);
  }
  return users;
}

/** Which isolate serves each request. */
export function assignIsolates(
  w: Workload,
  topology: Topology,
  sticky: Stickiness,
  seed: number,
): Int32Array {
  const users = usersOf(w);
  const rng = createRng(seed ^ 0x5eed);
  const colos = topology.isolatesIn.length;
  const out = new Int32Array(w.size);
  for (let i = 0; i < w.size; i++) {
    const user = users[i] as number;
    const home = chainHash(user, 1) % colos;
    const colo = rng.next() < sticky.colo ? home : rng.int(colos);
    const isolates = topology.isolatesIn[colo] as number[];
    const own = chainHash(user, 2 + colo) % isolates.length;
    const k = rng.next() < sticky.isolate ? own : rng.int(isolates.length);
    out[i] = isolates[k] as number;
  }
  return out;
}
