/**
 * The key store's writes against KV (the test's local KV, isolated to this file): a key whose
 * pool markers cannot be written leaves no record behind (issue 24: the admin got a 500 and
 * never saw the key, yet its record stayed, an orphan).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ENFORCED_MARKER_PREFIX } from "../../core/settings/model-name.ts";
import type { ClientKeyRecord } from "./key-record.ts";
import { readEnforced, readKey, writeKey } from "./key-store.ts";

const record = (id: string, models: string[]): ClientKeyRecord => ({
  id,
  hash: "0".repeat(64),
  name: "store test",
  models,
  priority: "interactive",
  limits: { requestsPerMinute: null, promptTokensPerMinute: null },
  createdAt: 1,
});

/** The file's KV, but every marker write fails as KV fails a name it cannot store. */
const failingMarkers = new Proxy(env.SETTINGS, {
  get(target, name) {
    if (name === "put") {
      return (key: string, value: string) =>
        key.startsWith(ENFORCED_MARKER_PREFIX)
          ? Promise.reject(new Error("KV put failed: key name too long"))
          : target.put(key, value);
    }
    const value = Reflect.get(target, name);
    return typeof value === "function" ? value.bind(target) : value;
  },
});

describe("writeKey", () => {
  it("a key whose marker write failed stayed stored though its key was never shown (orphan)", async () => {
    await expect(writeKey(failingMarkers, record("00000000000000aa", ["m"]))).rejects.toThrow(
      /KV put failed/,
    );
    expect(await readKey(env.SETTINGS, "00000000000000aa")).toBeNull();
    expect(await readEnforced(env.SETTINGS, "m")).toBe(false);
  });

  it("stores the record and one marker per model", async () => {
    await writeKey(env.SETTINGS, record("00000000000000bb", ["m", "n"]));
    expect((await readKey(env.SETTINGS, "00000000000000bb"))?.models).toEqual(["m", "n"]);
    expect(await readEnforced(env.SETTINGS, "m")).toBe(true);
    expect(await readEnforced(env.SETTINGS, "n")).toBe(true);
  });
});
