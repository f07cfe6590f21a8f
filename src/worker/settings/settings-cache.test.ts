import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { parseSettings } from "../../core/settings/parse-settings.ts";
import { ApiError } from "../errors/api-error.ts";
import { loadSettings, SETTINGS_KEY, SettingsCache } from "./settings-cache.ts";

const doc = (url: string) => JSON.stringify({ pools: { m: { origins: [{ id: "a", url }] } } });

beforeEach(async () => {
  await env.SETTINGS.delete(SETTINGS_KEY);
});

describe("SettingsCache", () => {
  it("without a document: 503 settings_missing", async () => {
    const cache = new SettingsCache();
    const error = await cache.get(env.SETTINGS, 1000, 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("settings_missing");
    expect((error as ApiError).status).toBe(503);
  });

  it("reuses what it read for ttlMs, then reads KV again", async () => {
    const cache = new SettingsCache();
    await env.SETTINGS.put(SETTINGS_KEY, doc("https://one.example"), { metadata: { revision: 7 } });
    const first = await cache.get(env.SETTINGS, 1000, 0);
    expect(first.pool("m")?.origins[0]?.url).toBe("https://one.example");
    expect(first.revision).toBe(7);
    await env.SETTINGS.put(SETTINGS_KEY, doc("https://two.example"));
    expect((await cache.get(env.SETTINGS, 1000, 999)).pool("m")?.origins[0]?.url).toBe(
      "https://one.example",
    );
    const second = await cache.get(env.SETTINGS, 1000, 1000);
    expect(second.pool("m")?.origins[0]?.url).toBe("https://two.example");
    expect(second.revision).toBe(0);
    expect(second.version("m").fingerprint).not.toBe(first.version("m").fingerprint);
  });

  it("keeps the last good settings when KV holds an invalid document, and says why", async () => {
    const cache = new SettingsCache();
    await env.SETTINGS.put(SETTINGS_KEY, doc("https://one.example"));
    await cache.get(env.SETTINGS, 0, 0);
    await env.SETTINGS.put(SETTINGS_KEY, "{ not json");
    expect((await cache.get(env.SETTINGS, 0, 1)).pool("m")).toBeDefined();
    expect(cache.status().rejected?.errors).toEqual([
      { field: "(document)", reason: "is not valid JSON" },
    ]);
    await env.SETTINGS.put(SETTINGS_KEY, doc("gopher://x"));
    await cache.get(env.SETTINGS, 0, 2);
    expect(cache.status().rejected?.errors[0]?.field).toBe("pools.m.origins[0].url");
    await env.SETTINGS.put(SETTINGS_KEY, doc("https://three.example"));
    expect((await cache.get(env.SETTINGS, 0, 3)).pool("m")?.origins[0]?.url).toBe(
      "https://three.example",
    );
    expect(cache.status().rejected).toBeNull();
  });

  it("an invalid first document: 503 settings_invalid", async () => {
    const cache = new SettingsCache();
    await env.SETTINGS.put(SETTINGS_KEY, doc("gopher://x"));
    const error = await cache.get(env.SETTINGS, 0, 0).catch((e: unknown) => e);
    expect((error as ApiError).code).toBe("settings_invalid");
  });

  it("equal settings have equal fingerprints; the limit is the largest pool's", async () => {
    const cache = new SettingsCache();
    const two = {
      pools: {
        a: { origins: [{ id: "x", url: "https://x.example" }], maxBodyBytes: 2048 },
        b: { origins: [{ id: "x", url: "https://x.example" }] },
      },
    };
    await env.SETTINGS.put(SETTINGS_KEY, JSON.stringify(two));
    const loaded = await cache.get(env.SETTINGS, 0, 0);
    expect(loaded.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(loaded.version("a").fingerprint).not.toBe(loaded.version("b").fingerprint);
    const again = await new SettingsCache().get(env.SETTINGS, 0, 0);
    expect(again.version("a")).toEqual(loaded.version("a"));
  });

  it("revisions never repeat in one isolate, even within a millisecond, and stay ahead of KV's", async () => {
    const cache = new SettingsCache();
    await env.SETTINGS.put(SETTINGS_KEY, doc("https://one.example"), {
      metadata: { revision: 5000 },
    });
    await cache.get(env.SETTINGS, 0, 0);
    expect([cache.nextRevision(10), cache.nextRevision(10), cache.nextRevision(9000)]).toEqual([
      5001, 5002, 9000,
    ]);
    expect(cache.nextRevision(9000)).toBe(9001);
  });

  it("adopting a write never rolls back past a newer one this isolate already uses", () => {
    const cache = new SettingsCache();
    const loaded = (url: string, revision: number) => {
      const parsed = parseSettings(JSON.parse(doc(url)));
      if (!parsed.ok) throw new Error("test document invalid");
      return loadSettings(parsed.value, revision, revision);
    };
    cache.adopt(loaded("https://newer.example", 2), doc("https://newer.example"));
    cache.adopt(loaded("https://older.example", 1), doc("https://older.example"));
    expect(cache.status().revision).toBe(2);
    cache.adopt(loaded("https://newest.example", 3), doc("https://newest.example"));
    expect(cache.status().revision).toBe(3);
  });

  it("with no pools, the limit before the model is known is the default, not 0", async () => {
    const cache = new SettingsCache();
    await env.SETTINGS.put(SETTINGS_KEY, '{"pools":{}}');
    const loaded = await cache.get(env.SETTINGS, 0, 0);
    expect(loaded.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(loaded.pool("m")).toBeUndefined();
  });
});
