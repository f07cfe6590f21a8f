import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { type PolicyType, policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { CoreRouter } from "./core-router.ts";

const origins = ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.test` }));

function router(indexFeed: "router" | "engine-events", policy: PolicyType = "cache-aware") {
  const pool = parsePool({ origins, policy: policyOf(policy), indexFeed });
  return new CoreRouter(pool, { model: "m" });
}

function chain(family: number, chunks: number): number[] {
  const hashes: number[] = [];
  let h = family;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i);
    hashes.push(h);
  }
  return hashes;
}

const owned = (r: CoreRouter, id: string) =>
  r.stats(0).origins.find((o) => o.id === id)?.ownedTokens;

describe("index feed: engine events", () => {
  it("route claims nothing; kv-stored runs build the path under their parent", () => {
    const r = router("engine-events");
    const hashes = chain(5, 8);
    const d = r.route({ chunkHashes: hashes, promptTokens: 8 * 64 }, 0);
    expect(owned(r, d.origin as string)).toBe(0);
    // The engine prefilled the prompt in two steps: blocks 0-4, then 5-7 after block 4.
    r.ingest("b", [{ type: "kv-stored", parent: null, hashes: hashes.slice(0, 5) }], 1);
    r.ingest("b", [{ type: "kv-stored", parent: hashes[4] as number, hashes: hashes.slice(5) }], 2);
    expect(owned(r, "b")).toBe(8 * 64);
    const again = r.route({ chunkHashes: hashes, promptTokens: 8 * 64 }, 3);
    expect(again).toMatchObject({ origin: "b", matchedTokens: 8 * 64 });
  });

  it("kv-removed drops the block and what the origin holds below it, for that origin only", () => {
    const r = router("engine-events");
    const hashes = chain(6, 6);
    r.ingest("a", [{ type: "kv-stored", parent: null, hashes }], 1);
    r.ingest("c", [{ type: "kv-stored", parent: null, hashes: hashes.slice(0, 4) }], 1);
    r.ingest("a", [{ type: "kv-removed", hashes: [hashes[3] as number] }], 2);
    expect(owned(r, "a")).toBe(3 * 64);
    expect(owned(r, "c")).toBe(4 * 64);
  });

  it("a run whose parent nobody holds is not placed", () => {
    const r = router("engine-events");
    const hashes = chain(7, 4);
    r.ingest("a", [{ type: "kv-stored", parent: hashes[1] as number, hashes: hashes.slice(2) }], 1);
    expect(r.stats(1).index.chunks).toBe(0);
  });

  it("a failure before the first byte takes back nothing the engine stored", () => {
    const r = router("engine-events");
    const hashes = chain(8, 4);
    r.ingest("a", [{ type: "kv-stored", parent: null, hashes }], 0);
    const d = r.route({ chunkHashes: hashes, promptTokens: 4 * 64 }, 1);
    expect(d.origin).toBe("a");
    r.complete(d.ticket as string, { ok: false, failure: "connect" }, 2);
    expect(owned(r, "a")).toBe(4 * 64);
  });

  it("misses do not shrink capacity: the engine reports it", () => {
    const r = router("engine-events");
    const hashes = chain(9, 10);
    r.ingest("a", [{ type: "kv-stored", parent: null, hashes }], 0);
    const d = r.route({ chunkHashes: hashes, promptTokens: 640 }, 1);
    const before = r.stats(1).origins.find((o) => o.id === "a")?.capacityTokens;
    r.complete(d.ticket as string, { ok: true, promptTokens: 640, cachedTokens: 0 }, 2);
    expect(r.stats(2).origins.find((o) => o.id === "a")?.capacityTokens).toBe(before);
  });
});

describe("index feed: router", () => {
  it("claims on route and ignores kv events", () => {
    const r = router("router");
    const hashes = chain(10, 4);
    const d = r.route({ chunkHashes: hashes, promptTokens: 4 * 64 }, 0);
    const other = d.origin === "a" ? "b" : "a";
    expect(owned(r, d.origin as string)).toBe(4 * 64);
    r.ingest(other, [{ type: "kv-stored", parent: null, hashes }], 1);
    r.ingest(d.origin as string, [{ type: "kv-removed", hashes: [hashes[0] as number] }], 1);
    expect(owned(r, other)).toBe(0);
    expect(owned(r, d.origin as string)).toBe(4 * 64);
  });

  it("switching the feed starts a new index", () => {
    const r = router("router");
    r.route({ chunkHashes: chain(11, 4), promptTokens: 256 }, 0);
    expect(r.stats(0).index.chunks).toBe(4);
    r.applySettings(
      parsePool({ origins, policy: policyOf("cache-aware"), indexFeed: "engine-events" }),
    );
    expect(r.stats(0).index.chunks).toBe(0);
  });
});
