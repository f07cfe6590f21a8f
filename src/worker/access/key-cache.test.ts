/**
 * The isolate's cache of client keys over KV (key-cache.ts), against a KV that counts its reads
 * and can be made to fail: what a request costs in KV reads, and what a KV outage does.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors/api-error.ts";
import { KeyCache } from "./key-cache.ts";
import type { ClientKeyRecord } from "./key-record.ts";

const TTL = 1000;

const record = (id: string, models: string[]): ClientKeyRecord => ({
  id,
  hash: "0".repeat(64),
  name: id,
  models,
  priority: "interactive",
  limits: { requestsPerMinute: null, promptTokensPerMinute: null },
  createdAt: 0,
});

/** A KV holding `values` (JSON), counting reads per name; `failing` makes every read throw. */
function countingKv(values: Record<string, unknown>) {
  const reads = new Map<string, number>();
  const kv = {
    failing: false,
    reads,
    async get(name: string, type?: string) {
      reads.set(name, (reads.get(name) ?? 0) + 1);
      if (kv.failing) throw new Error("KV GET failed: 500");
      const value = values[name];
      if (value === undefined) return null;
      return type === "json" ? value : JSON.stringify(value);
    },
  };
  return { kv, store: kv as unknown as KVNamespace };
}

describe("KeyCache", () => {
  it("one KV read per id and TTL, unknown ids included", async () => {
    const { kv, store } = countingKv({
      "client-key:aaaaaaaaaaaaaaaa": record("aaaaaaaaaaaaaaaa", ["m"]),
    });
    const cache = new KeyCache();
    for (let now = 0; now < TTL; now += 100) {
      expect((await cache.record(store, "aaaaaaaaaaaaaaaa", TTL, now))?.id).toBe(
        "aaaaaaaaaaaaaaaa",
      );
      expect(await cache.record(store, "bbbbbbbbbbbbbbbb", TTL, now)).toBeNull();
    }
    expect(kv.reads.get("client-key:aaaaaaaaaaaaaaaa")).toBe(1);
    expect(kv.reads.get("client-key:bbbbbbbbbbbbbbbb")).toBe(1);
    await cache.record(store, "bbbbbbbbbbbbbbbb", TTL, TTL);
    expect(kv.reads.get("client-key:bbbbbbbbbbbbbbbb")).toBe(2);
  });

  it("a pool is enforced by its own marker or by `*`; a created key enforces its pools here at once", async () => {
    const { store } = countingKv({ "client-keys:enforced:a": "1" });
    const cache = new KeyCache();
    expect(await cache.enforcedFor(store, "a", TTL, 0)).toBe(true);
    expect(await cache.enforcedFor(store, "b", TTL, 0)).toBe(false);
    expect(await cache.enforcedEverywhere(store, TTL, 0)).toBe(false);
    cache.created(record("cccccccccccccccc", ["*"]), 1);
    expect(await cache.enforcedEverywhere(store, TTL, 2)).toBe(true);
    expect(await cache.enforcedFor(store, "b", TTL, 2)).toBe(true);
  });

  it("a failed KV read keeps what was known; with nothing known it is a 503, never an open door", async () => {
    const { kv, store } = countingKv({ "client-keys:enforced:a": "1" });
    const cache = new KeyCache();
    expect(await cache.enforcedFor(store, "a", TTL, 0)).toBe(true);
    kv.failing = true;
    expect(await cache.enforcedFor(store, "a", TTL, 5 * TTL)).toBe(true);
    const unknown = await cache.enforcedFor(store, "b", TTL, 5 * TTL).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ApiError);
    expect(unknown).toMatchObject({ status: 503, code: "keys_unavailable" });
  });

  it("holds at most 4,096 ids: made-up keys cannot grow the isolate's memory", async () => {
    const { kv, store } = countingKv({});
    const cache = new KeyCache();
    const id = (i: number) => i.toString(16).padStart(16, "0");
    for (let i = 0; i <= 4096; i++) await cache.record(store, id(i), TTL, 0);
    // The oldest id was dropped (read again), the newest kept.
    await cache.record(store, id(0), TTL, 0);
    await cache.record(store, id(4096), TTL, 0);
    expect(kv.reads.get(`client-key:${id(0)}`)).toBe(2);
    expect(kv.reads.get(`client-key:${id(4096)}`)).toBe(1);
  });
});
