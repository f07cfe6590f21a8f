/**
 * The registry's isolate id (issue 23, defect A: 128 random bits, so a new isolate never meets
 * an id still in its coordinator's ledger; edge-protocol.test.ts shows what one costs) and its
 * memory budget across pools (defect H).
 */
import { describe, expect, it } from "vitest";
import { chainHash } from "../../../core/chunk-hash.ts";
import { policyOf } from "../../../core/policies/index.ts";
import { parsePool } from "../../../core/settings/parse-settings.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import {
  budgetShares,
  ISOLATE_REPLICA_CHUNKS,
  REPLICA_BYTES_PER_CHUNK,
  ReplicaRegistry,
} from "./replica-registry.ts";

describe("ReplicaRegistry.isolate", () => {
  it("defect A: an isolate draws a 128-bit id (22 base64url characters), not 32 bits", () => {
    const ids = Array.from({ length: 256 }, () => new ReplicaRegistry().isolate);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{21}[AQgw]$/);
    expect(new Set(ids).size).toBe(ids.length);
    const registry = new ReplicaRegistry();
    expect(registry.isolate).toBe(registry.isolate);
  });
});

describe("ReplicaRegistry's memory budget", () => {
  function ref(model: string, replicaMaxChunks: number, fingerprint = "f1"): PoolRef {
    const pool = parsePool({
      origins: ["a", "b"].map((id) => ({ id: `${model}-${id}`, url: `http://${id}.test` })),
      policy: policyOf("cost"),
      coordination: "edge",
      edge: { chunkStride: 1, replicaMaxChunks },
    });
    return { model, pool, version: { revision: 0, fingerprint } };
  }

  /** Prompt `c`: 64 chunks of its own. */
  function prompt(c: number) {
    const hashes: number[] = [];
    let h = 3;
    for (let i = 0; i < 64; i++) {
      h = chainHash(h, c * 1_000_003 + i);
      hashes.push(h);
    }
    return { chunkHashes: hashes, promptTokens: hashes.length * 64 };
  }

  it("defect H: the pools an isolate serves share one index budget; a pool's most recent prefixes stay when another comes", () => {
    const registry = new ReplicaRegistry("iso-budget", 4000);
    const a = registry.get(ref("budget-a", 3000), 0);
    for (let c = 0; c < 60; c++) a.replica.route(prompt(c), c);
    expect(a.replica.stats(100).index.chunks).toBe(3000);
    // A second pool: 6000 chunks wanted, 4000 held, each pool two thirds of its own.
    const b = registry.get(ref("budget-b", 3000), 0);
    expect([a.maxChunks, b.maxChunks]).toEqual([2000, 2000]);
    for (let c = 0; c < 60; c++) b.replica.route(prompt(1000 + c), 200 + c);
    const chunks = (registry: ReplicaRegistry, now: number) =>
      ["budget-a", "budget-b"].map((m) => registry.peek(m)?.replica.stats(now).index.chunks);
    expect(chunks(registry, 300)).toEqual([2000, 2000]);
    // The index was cut to its most recent chunks, not emptied: a's last prompt is still held.
    const again = a.replica.route(prompt(59), 400);
    expect(again.matchedTokens).toBe(prompt(59).promptTokens);
    // New settings asking less give the other pool more.
    registry.get(ref("budget-b", 1000, "f2"), 0);
    expect([a.maxChunks, b.maxChunks]).toEqual([3000, 1000]);
    expect(b.replica.stats(500).index.chunks).toBeLessThanOrEqual(1000);
  });

  it("a replica's index at its cap takes at most REPLICA_BYTES_PER_CHUNK a chunk (the default grain)", () => {
    const pool = parsePool({
      origins: ["a", "b", "c", "d"].map((id) => ({ id, url: `http://${id}.test` })),
      policy: policyOf("cost"),
      coordination: "edge",
      // Caches large enough that the index's cap binds, not the origins' KV capacity.
      kvCapacityTokens: 1e9,
      edge: { replicaMaxChunks: 20_000 },
    });
    const registry = new ReplicaRegistry("iso-bytes");
    const held = registry.get(
      { model: "bytes", pool, version: { revision: 0, fingerprint: "f" } },
      0,
    );
    // 64-chunk prompts under 4 system prompts: 8 index chunks each at stride 8, 6 of them its own.
    for (let c = 0; c < 4000; c++) {
      const hashes: number[] = [];
      let h = 3 + (c % 4);
      for (let i = 0; i < 64; i++) {
        h = chainHash(h, i < 16 ? i : c * 1_000_003 + i);
        hashes.push(h);
      }
      const d = held.replica.route({ chunkHashes: hashes, promptTokens: 64 * 64 }, c);
      held.replica.complete(d.ticket as string, { ok: true }, c);
    }
    const index = held.replica.stats(4000).index;
    expect(index.chunks).toBe(20_000);
    expect(index.bytes / index.chunks).toBeLessThanOrEqual(REPLICA_BYTES_PER_CHUNK);
  });

  it("splits by one fraction only past the budget; the default budget holds two default pools whole", () => {
    expect(budgetShares([3000, 1000], 4000)).toEqual([3000, 1000]);
    expect(budgetShares([4000, 4000], 4000)).toEqual([2000, 2000]);
    expect(budgetShares([262_144, 262_144], ISOLATE_REPLICA_CHUNKS)).toEqual([262_144, 262_144]);
    const three = budgetShares([262_144, 262_144, 262_144], ISOLATE_REPLICA_CHUNKS);
    expect(three.reduce((n, s) => n + s, 0)).toBeLessThanOrEqual(ISOLATE_REPLICA_CHUNKS);
    expect(three[0]).toBe(174_762);
  });
});
