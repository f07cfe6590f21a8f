import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../core/prompt/prompt-key.ts";
import type { RequestOutcome, RequestReport } from "../request-record/request-report.ts";
import { chat, conversation, origin, pool, putSettings } from "../test/helpers.ts";
import type { RouterObject } from "./router-object.ts";
import { SnapshotStore } from "./snapshot-store.ts";

const SAVED = "snapshot-saved";
const UNSAVED = "snapshot-unsaved";
const CORRUPT = "snapshot-corrupt";
const LEASES = "snapshot-leases";
const TOPICS = ["alpha", "beta", "gamma"];

beforeAll(async () => {
  const origins = (tag: string) => [1, 2, 3].map((n) => origin(`ro-${tag}-${n}`));
  await putSettings({
    pools: {
      [SAVED]: pool(origins("s")),
      [UNSAVED]: pool(origins("u")),
      [CORRUPT]: pool(origins("c")),
      [LEASES]: pool(origins("l"), { leaseMs: 1000 }),
    },
  });
});

/** The report of a request that ended as `outcome` at `origin`, as the Worker sends it. */
function ended(origin: string | null, outcome: RequestOutcome): RequestReport {
  return { origin, outcome, failures: [], matchedTokens: 0, objectMs: null, fallback: null };
}

/** Send each topic's conversation through the Worker, so the object's index learns them. */
async function teach(model: string) {
  for (const topic of TOPICS) {
    const res = await chat(model, conversation(topic, 1));
    expect(res.status).toBe(200);
    await res.text();
  }
}

/** What the object's index matches for each topic's next turn, asked over RPC. */
async function matches(model: string): Promise<number[]> {
  const stub = env.ROUTER.getByName(model);
  const state = await stub.state();
  if (!state) throw new Error("object has no settings");
  const out: number[] = [];
  for (const topic of TOPICS) {
    const key = promptKey({ model, messages: conversation(topic, 2) });
    const decision = await stub.route({
      chunkHashes: key.chunkHashes,
      promptTokens: key.promptTokens,
      version: state.version,
    });
    out.push(decision?.matchedTokens ?? -1);
    if (decision?.ticket) {
      await stub.complete(decision.ticket, ended(decision.origin, "client_abort"));
    }
  }
  return out;
}

/** Tear the instance down (memory gone, storage kept) and prove a new one answers. */
async function restart(model: string) {
  const stub = env.ROUTER.getByName(model);
  await runInDurableObject(stub, (instance: RouterObject) => {
    (instance as unknown as { marker: boolean }).marker = true;
  });
  await evictDurableObject(stub);
  const fresh = await runInDurableObject(
    env.ROUTER.getByName(model),
    (instance: RouterObject) => (instance as unknown as { marker?: boolean }).marker,
  );
  expect(fresh).toBeUndefined();
}

describe("router object persistence", () => {
  it("after the alarm's snapshot and a fresh instance, the index answers the same matches", async () => {
    await teach(SAVED);
    // Asking routes the next turn, which the index then holds too: ask once to settle it.
    await matches(SAVED);
    const before = await matches(SAVED);
    expect(before.every((m) => m > 0)).toBe(true);
    expect(await runDurableObjectAlarm(env.ROUTER.getByName(SAVED))).toBe(true);
    expect((await env.ROUTER.getByName(SAVED).state())?.snapshotRows).toBeGreaterThan(0);
    await restart(SAVED);
    expect(await matches(SAVED)).toEqual(before);
  });

  it("without a snapshot a fresh instance starts empty (settings kept)", async () => {
    await teach(UNSAVED);
    expect((await matches(UNSAVED)).every((m) => m > 0)).toBe(true);
    await restart(UNSAVED);
    expect(await matches(UNSAVED)).toEqual([0, 0, 0]);
  });

  it("an unreadable snapshot is discarded and the object still routes", async () => {
    await teach(CORRUPT);
    await runDurableObjectAlarm(env.ROUTER.getByName(CORRUPT));
    await runInDurableObject(env.ROUTER.getByName(CORRUPT), (_, state) => {
      state.storage.sql.exec("UPDATE snapshot SET data = ?", new Uint8Array([1, 2, 3]).buffer);
    });
    await restart(CORRUPT);
    expect(await matches(CORRUPT)).toEqual([0, 0, 0]);
    expect((await env.ROUTER.getByName(CORRUPT).state())?.snapshotRows).toBe(0);
  });

  it("the alarm expires leases whose completion never came", async () => {
    const stub = env.ROUTER.getByName(LEASES);
    await teach(LEASES);
    const state = await stub.state();
    const key = promptKey({ model: LEASES, messages: conversation("lost", 0) });
    const decision = await stub.route({
      chunkHashes: key.chunkHashes,
      promptTokens: key.promptTokens,
      version: state!.version,
    });
    expect(decision?.ticket).toBeTruthy();
    expect((await stub.state())?.router.outstanding).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await stub.state())?.router.outstanding).toBe(0);
    // Its ticket is gone: a late completion is refused rather than double-counted.
    expect(await stub.complete(decision!.ticket!, ended(decision!.origin, "ok"))).toBe(false);
  });
});

describe("SnapshotStore", () => {
  it("splits a snapshot across rows below the value cap and reads it back whole", async () => {
    await runInDurableObject(env.ROUTER.getByName("store-test"), (_, state) => {
      const store = new SnapshotStore(state.storage, 1000);
      const bytes = crypto.getRandomValues(new Uint8Array(2500));
      store.saveSnapshot(bytes);
      expect(store.snapshotRows).toBe(3);
      expect(store.loadSnapshot()).toEqual(bytes);
      store.saveSnapshot(bytes.subarray(0, 10));
      expect(store.snapshotRows).toBe(1);
      expect(store.loadSnapshot()).toEqual(bytes.subarray(0, 10));
    });
  });
});
