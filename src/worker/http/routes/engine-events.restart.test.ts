/**
 * Engine facts across restarts (issue 24, item 3): an origin reported `down` or `draining`, and
 * an engine's reported KV capacity, hold when the object that took the webhook restarts (an idle
 * eviction, a deploy), in object mode (the pool's object) and edge mode (the pool's root, which
 * tells the coordinators). Load is not kept: it fades with age and returns with the next report.
 */
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { currentSettings } from "../../settings/settings-cache.ts";
import {
  chat,
  conversation,
  engineBatch,
  objectState,
  origin,
  pool,
  postSigned,
  putSettings,
  signBatch,
} from "../../test/helpers.ts";

const OBJECT_MODEL = "facts-object";
const EDGE_MODEL = "facts-edge";

beforeAll(async () => {
  const origins = (tag: string) => [1, 2, 3].map((n) => origin(`${tag}-${n}`));
  await putSettings({
    pools: {
      [OBJECT_MODEL]: pool(origins("fo")),
      [EDGE_MODEL]: pool(origins("fe"), { coordination: "edge" }),
    },
  });
});

/** Origin 1 down, origin 2 draining, origin 3 up with a reported KV capacity and a load. */
async function report(tag: string): Promise<void> {
  const batches = [
    engineBatch(`${tag}-1`, [{ type: "health", status: "down" }]),
    engineBatch(`${tag}-2`, [{ type: "health", status: "draining" }]),
    engineBatch(`${tag}-3`, [
      { type: "capacity", kvCapacityTokens: 2048 },
      { type: "load", running: 2, waiting: 0, kvUsage: 0.5 },
    ]),
  ];
  for (const body of batches) expect((await postSigned(await signBatch(body))).status).toBe(200);
}

describe("engine facts survive a restart of the object that took them", () => {
  it("object mode: down and draining stay so after an eviction; capacity stays; load does not", async () => {
    await report("fo");
    const before = await objectState(OBJECT_MODEL);
    await evictDurableObject(env.ROUTER.getByName(OBJECT_MODEL));

    const after = (await objectState(OBJECT_MODEL))?.router.origins ?? [];
    expect(after.map((o) => [o.id, o.health, o.eligible])).toEqual([
      ["fo-1", "down", false],
      ["fo-2", "draining", false],
      ["fo-3", "up", true],
    ]);
    const capacity = (state: typeof before, id: string) =>
      state?.router.origins.find((o) => o.id === id)?.capacityTokens;
    expect(capacity(await objectState(OBJECT_MODEL), "fo-3")).toBe(capacity(before, "fo-3"));
    expect(capacity(before, "fo-3")).not.toBe(capacity(before, "fo-1"));
    expect(after.find((o) => o.id === "fo-3")?.engine).toBeNull();
    for (let t = 0; t < 6; t++) {
      const res = await chat(OBJECT_MODEL, conversation(`after-restart-${t}`, 0));
      await res.text();
      expect(res.headers.get("x-router-origin")).toBe("fo-3");
    }
  });

  it("edge mode: the root still tells coordinators down, draining and the capacity", async () => {
    await report("fe");
    const settings = await currentSettings(env);
    const root = env.EDGE_ROOT.getByName(EDGE_MODEL);
    await evictDurableObject(root);

    const answer = await env.EDGE_ROOT.getByName(EDGE_MODEL).exchange(
      { coordinator: "probe", loads: [], rate: { requestsPerSecond: 0, meanPrefillWork: 0 } },
      settings.version(EDGE_MODEL),
    );
    expect(answer?.engines.map((e) => [e.id, e.health, e.capacityTokens, e.load])).toEqual([
      ["fe-1", "down", null, null],
      ["fe-2", "draining", null, null],
      ["fe-3", "up", 2048, null],
    ]);
  });

  it("an origin removed from settings loses its facts: back in settings, it starts up", async () => {
    const settings = {
      pools: { [OBJECT_MODEL]: pool([origin("fo-2"), origin("fo-3")]) },
    };
    await putSettings(settings);
    await putSettings({ pools: { [OBJECT_MODEL]: pool([1, 2, 3].map((n) => origin(`fo-${n}`))) } });
    await evictDurableObject(env.ROUTER.getByName(OBJECT_MODEL));
    const after = (await objectState(OBJECT_MODEL))?.router.origins ?? [];
    expect(after.map((o) => [o.id, o.health])).toEqual([
      ["fo-1", "up"],
      ["fo-2", "draining"],
      ["fo-3", "up"],
    ]);
  });
});
