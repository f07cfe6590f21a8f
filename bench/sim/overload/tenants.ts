/**
 * Who sends each request of an overload replay: a tenant mix (keys, each with a priority and a
 * share of the offered requests) laid over a workload. A conversation stays with one tenant, as
 * one user's chat does: requests are grouped by the chained hash naming their first
 * `SESSION_TOKENS` tokens (every request of the conversation trace shares its first 512-token
 * block, a system prompt, and the second block tells conversations apart), or their whole
 * prompt when shorter, and each group goes to a tenant by a seeded hash, in proportion to the
 * shares. Deterministic in the seed.
 */

import type { Workload } from "../../../sim/workload/workload.ts";
import { chainHash } from "../../../src/core/chunk-hash.ts";
import type { Priority, RouteClient } from "../../../src/core/route-request.ts";

export interface Tenant {
  readonly key: string;
  readonly priority: Priority;
  /** Share of the requests, (0, 1]; a mix's shares sum to 1. */
  readonly share: number;
}

/** Leading prompt tokens that name a conversation. */
const SESSION_TOKENS = 1024;

/** Each request's tenant (an index into `tenants`). */
export function assignTenants(w: Workload, tenants: readonly Tenant[], seed: number): Uint8Array {
  const total = tenants.reduce((a, t) => a + t.share, 0);
  if (tenants.length === 0 || Math.abs(total - 1) > 1e-9) {
    throw new Error(`tenant shares must sum to 1, got ${total}`);
  }
  const depth = Math.max(1, Math.floor(SESSION_TOKENS / w.chunkTokens));
  const out = new Uint8Array(w.size);
  for (let i = 0; i < w.size; i++) {
    const start = w.hashStart[i] as number;
    const chunks = (w.hashStart[i + 1] as number) - start;
    const session = chunks > 0 ? (w.hashes[start + Math.min(depth, chunks) - 1] as number) : -i - 1;
    // A 53-bit hash mixed with the seed, to a uniform draw in [0, 1).
    const u = chainHash(seed, session) / 2 ** 53;
    let k = 0;
    let cumulative = tenants[0]?.share ?? 1;
    while (u >= cumulative && k < tenants.length - 1) cumulative += tenants[++k]?.share ?? 0;
    out[i] = k;
  }
  return out;
}

export function clientsOf(tenants: readonly Tenant[]): RouteClient[] {
  return tenants.map(({ key, priority }) => ({ key, priority }));
}
