import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RouterObject } from "./router-object.ts";
import { StoredResponseBook } from "./stored-response-book.ts";

const LIMITS = { maxEntries: 3, ttlMs: 60_000 };

describe("stored responses in the pool object", () => {
  it("survive the object's eviction (written through, not in the snapshot)", async () => {
    const stub = env.ROUTER.getByName("stored-evicted");
    await stub.rememberResponse("resp_a", "o1", LIMITS);
    await evictDurableObject(stub);
    expect(await stub.storedResponse("resp_a", LIMITS)).toMatchObject({ origin: "o1" });
    expect(await stub.forgetResponse("resp_a", LIMITS)).toBe(true);
    await evictDurableObject(stub);
    expect(await stub.storedResponse("resp_a", LIMITS)).toBeNull();
  });

  it("keep the bound in storage too: a restart loads only the most recent", async () => {
    const stub = env.ROUTER.getByName("stored-bounded");
    await runInDurableObject(stub, (_: RouterObject, state) => {
      const book = new StoredResponseBook(state.storage);
      for (let i = 0; i < 5; i++) book.remember(`resp_${i}`, `o${i}`, LIMITS, 1000 + i);
      const rows = state.storage.sql.exec("SELECT id FROM stored_response ORDER BY at").toArray();
      expect(rows.map((r) => r.id)).toEqual(["resp_2", "resp_3", "resp_4"]);
      const again = new StoredResponseBook(state.storage);
      expect(again.lookup("resp_1", LIMITS, 2000)).toBeNull();
      expect(again.lookup("resp_4", LIMITS, 2000)).toMatchObject({ origin: "o4" });
      // Past the TTL: gone from memory and, after the sweep, from storage.
      expect(again.lookup("resp_4", LIMITS, 1004 + LIMITS.ttlMs)).toBeNull();
      again.sweep(1004 + LIMITS.ttlMs);
      expect(state.storage.sql.exec("SELECT id FROM stored_response").toArray()).toEqual([]);
    });
  });
});
