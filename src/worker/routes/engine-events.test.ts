import { beforeAll, describe, expect, it } from "vitest";
import {
  chat,
  conversation,
  nowSeconds,
  objectState,
  origin,
  pool,
  postEvents,
  putSettings,
  sign,
} from "../test/helpers.ts";

const MODEL = "webhook-model";
const ORIGINS = ["wh-1", "wh-2", "wh-3"];

beforeAll(async () => {
  await putSettings({ pools: { [MODEL]: pool(ORIGINS.map((id) => origin(id))) } });
});

const batch = (originId: string, events: unknown[]) => JSON.stringify({ origin: originId, events });
const load = { type: "load", running: 3, waiting: 1, kvUsage: 0.5 };

async function signedPost(body: string, timestamp = nowSeconds()) {
  return postEvents(body, await sign(body, timestamp));
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

async function originStats(id: string) {
  const state = await objectState(MODEL);
  return state?.router.origins.find((o) => o.id === id);
}

describe("engine webhooks", () => {
  it("a valid signed batch is accepted and applied", async () => {
    const res = await signedPost(batch("wh-1", [load]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 1, models: [MODEL] });
    const stats = await originStats("wh-1");
    expect(stats?.engine).toMatchObject({ running: 3, waiting: 1, kvUsage: 0.5 });
  });

  it("missing and malformed signatures: 401", async () => {
    const body = batch("wh-1", [load]);
    const missing = await postEvents(body);
    expect(missing.status).toBe(401);
    expect(await errorCode(missing)).toBe("signature_missing");
    const malformed = await postEvents(body, "v1=abc");
    expect(malformed.status).toBe(401);
    expect(await errorCode(malformed)).toBe("signature_malformed");
  });

  it("forged (wrong secret): 401", async () => {
    const body = batch("wh-1", [load]);
    const res = await postEvents(body, await sign(body, nowSeconds(), "not-the-secret"));
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("signature_mismatch");
  });

  it("stale (older than 5 minutes): 401", async () => {
    const res = await signedPost(batch("wh-1", [load]), nowSeconds() - 301);
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("signature_stale");
  });

  it("a replayed body under another timestamp: 401", async () => {
    const body = batch("wh-1", [load]);
    const old = await sign(body, nowSeconds() - 60);
    const replayed = old.replace(/^t=\d+/, `t=${nowSeconds()}`);
    const res = await postEvents(body, replayed);
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("signature_mismatch");
  });

  it("a body changed after signing: 401", async () => {
    const signature = await sign(batch("wh-1", [load]), nowSeconds());
    const res = await postEvents(batch("wh-2", [load]), signature);
    expect(res.status).toBe(401);
  });

  it("unknown origin: 404", async () => {
    const res = await signedPost(batch("nobody", [load]));
    expect(res.status).toBe(404);
    expect(await errorCode(res)).toBe("origin_not_found");
  });

  it("malformed: invalid JSON and invalid events are 400 naming the field", async () => {
    const notJson = await signedPost("{oops");
    expect(notJson.status).toBe(400);
    expect(await errorCode(notJson)).toBe("invalid_json");
    const bad = await signedPost(
      batch("wh-1", [{ type: "load", running: -1, waiting: 0, kvUsage: 2 }]),
    );
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("invalid_events");
    expect(body.error.details.map((d) => d.field)).toEqual([
      "events.0.running",
      "events.0.kvUsage",
    ]);
    const unknownType = await signedPost(batch("wh-1", [{ type: "reboot" }]));
    expect(unknownType.status).toBe(400);
  });

  it("cache-reset drops the origin's ownership in the index", async () => {
    const first = await chat(MODEL, conversation("reset", 0));
    await first.text();
    const holder = first.headers.get("x-router-origin") as string;
    expect((await originStats(holder))?.ownedTokens).toBeGreaterThan(0);
    const again = await chat(MODEL, conversation("reset", 1));
    await again.text();
    expect(Number(again.headers.get("x-router-matched-tokens"))).toBeGreaterThan(0);

    const res = await signedPost(batch(holder, [{ type: "cache-reset" }]));
    expect(res.status).toBe(200);
    expect((await originStats(holder))?.ownedTokens).toBe(0);
    const after = await chat(MODEL, conversation("reset", 2));
    await after.text();
    expect(after.headers.get("x-router-matched-tokens")).toBe("0");
  });

  it("health down takes an origin out of rotation; up brings it back", async () => {
    expect((await signedPost(batch("wh-3", [{ type: "health", status: "down" }]))).status).toBe(
      200,
    );
    expect((await originStats("wh-3"))?.eligible).toBe(false);
    for (let topic = 0; topic < 8; topic++) {
      const res = await chat(MODEL, conversation(`health-${topic}`, 0));
      await res.text();
      expect(res.headers.get("x-router-origin")).not.toBe("wh-3");
    }
    expect((await signedPost(batch("wh-3", [{ type: "health", status: "up" }]))).status).toBe(200);
    expect((await originStats("wh-3"))?.eligible).toBe(true);
  });
});
