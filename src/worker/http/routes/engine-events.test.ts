import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  engineBatch as batch,
  chat,
  conversation,
  nowSeconds,
  objectState,
  origin,
  pool,
  postEvents,
  postSigned,
  putSettings,
  sign,
  signBatch,
} from "../../test/helpers.ts";

const MODEL = "webhook-model";
const ORIGINS = ["wh-1", "wh-2", "wh-3"];
/** One origin each, so a replayed `down` would leave the pool nothing to route to. */
const RESET_MODEL = "replay-reset-model";
const HEALTH_MODEL = "replay-health-model";
const RESTART_MODEL = "replay-restart-model";
const AHEAD_MODEL = "ahead-model";

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool(ORIGINS.map((id) => origin(id))),
      [RESET_MODEL]: pool([origin("rr-1")]),
      [HEALTH_MODEL]: pool([origin("rh-1")]),
      [RESTART_MODEL]: pool([origin("rs-1")]),
      [AHEAD_MODEL]: pool([origin("ah-1")]),
    },
  });
});

const load = { type: "load", running: 3, waiting: 1, kvUsage: 0.5 };
const down = { type: "health", status: "down" };
const up = { type: "health", status: "up" };

async function signedPost(body: string, timestamp = nowSeconds()) {
  return postEvents(body, await sign(body, timestamp));
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

async function originStats(id: string, model = MODEL) {
  const state = await objectState(model);
  return state?.router.origins.find((o) => o.id === id);
}

/** Status and the origin that served one new request of `model` (its body is drained). */
async function routes(model: string, topic: string) {
  const res = await chat(model, conversation(topic, 0));
  await res.text();
  return { status: res.status, origin: res.headers.get("x-router-origin") };
}

describe("engine webhooks", () => {
  it("a valid signed batch is accepted and applied", async () => {
    const res = await signedPost(batch("wh-1", [load]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 1, models: [MODEL], duplicate: false });
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

describe("webhook error messages", () => {
  it("say what is wrong and what to do, codes unchanged (not 'x-router-signature is mismatch')", async () => {
    const body = batch("wh-1", [load]);
    const cases: [Promise<Response>, number, string, RegExp][] = [
      [
        postEvents(body, undefined),
        401,
        "signature_missing",
        /^the x-router-signature header is missing: sign each batch/,
      ],
      [
        postEvents(body, "t=1,v1=zz"),
        401,
        "signature_malformed",
        /^the x-router-signature header is malformed: expected t=<unix seconds>,v1=<64 hex digits>$/,
      ],
      [
        signedPost(body, nowSeconds() - 400),
        401,
        "signature_stale",
        /^the x-router-signature timestamp is more than 300 s away from the router's clock/,
      ],
      [
        postEvents(body, await sign(body, nowSeconds(), "not-the-secret")),
        401,
        "signature_mismatch",
        /^the x-router-signature signature does not match the body: sign "<t>\.<raw body>"/,
      ],
      [signedPost("{oops"), 400, "invalid_json", /^webhook batch is not valid JSON$/],
      [
        signedPost(batch("nobody", [load])),
        404,
        "origin_not_found",
        /^no pool lists origin 'nobody': send the origin's id exactly/,
      ],
      [
        signedPost(batch("wh-1", [load], Date.now() - 1_000_000)),
        400,
        "invalid_value",
        /^at: \d+ is 1000 s behind the router's clock/,
      ],
    ];
    for (const [pending, status, code, message] of cases) {
      const res = await pending;
      const { error } = (await res.json()) as { error: Record<string, unknown> };
      expect([res.status, error.code, error.type]).toEqual([
        status,
        code,
        status === 401
          ? "authentication_error"
          : status === 404
            ? "not_found_error"
            : "invalid_request_error",
      ]);
      expect(String(error.message)).toMatch(message);
    }
  });
});

describe("webhook replay (signed webhooks could be replayed for 5 minutes)", () => {
  it("a captured cache-reset replayed 35 s after it was signed does not wipe the index again", async () => {
    const first = await chat(RESET_MODEL, conversation("replayed-reset", 0));
    await first.text();
    // Captured as if signed 35 s ago; delivering it now is the reporter's own send.
    const at = Date.now() - 35_000;
    const captured = await signBatch(
      batch("rr-1", [{ type: "cache-reset" }], at),
      nowSeconds() - 35,
    );
    expect((await postSigned(captured)).status).toBe(200);
    expect((await originStats("rr-1", RESET_MODEL))?.ownedTokens).toBe(0);

    const relearn = await chat(RESET_MODEL, conversation("replayed-reset", 1));
    await relearn.text();
    const owned = (await originStats("rr-1", RESET_MODEL))?.ownedTokens ?? 0;
    expect(owned).toBeGreaterThan(0);
    for (let replay = 0; replay < 2; replay++) {
      expect((await postSigned(captured)).status).toBe(200);
      expect((await originStats("rr-1", RESET_MODEL))?.ownedTokens).toBe(owned);
    }
    const next = await chat(RESET_MODEL, conversation("replayed-reset", 2));
    await next.text();
    expect(Number(next.headers.get("x-router-matched-tokens"))).toBeGreaterThan(0);
  });

  it("a captured health: down replayed after an up does not stop the pool routing (no 503)", async () => {
    const wentDown = await signBatch(batch("rh-1", [down]));
    expect((await postSigned(wentDown)).status).toBe(200);
    expect((await routes(HEALTH_MODEL, "down")).status).toBe(503);
    expect((await postSigned(await signBatch(batch("rh-1", [up])))).status).toBe(200);
    expect(await routes(HEALTH_MODEL, "up")).toEqual({ status: 200, origin: "rh-1" });

    expect((await postSigned(wentDown)).status).toBe(200);
    expect((await originStats("rh-1", HEALTH_MODEL))?.eligible).toBe(true);
    expect(await routes(HEALTH_MODEL, "replayed")).toEqual({ status: 200, origin: "rh-1" });
  });

  it("a duplicate is answered 200 with duplicate: true and nothing applied, even after newer batches", async () => {
    const first = await signBatch(batch("wh-2", [{ ...load, running: 7 }]));
    expect(await (await postSigned(first)).json()).toEqual({
      accepted: 1,
      models: [MODEL],
      duplicate: false,
    });
    // A reporter retrying after a lost response must see success, or it would retry forever.
    const retry = await postSigned(first);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ accepted: 0, models: [MODEL], duplicate: true });

    expect(
      (await postSigned(await signBatch(batch("wh-2", [{ ...load, running: 9 }])))).status,
    ).toBe(200);
    const late = await postSigned(first);
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ accepted: 0, models: [MODEL], duplicate: true });
    expect((await originStats("wh-2"))?.engine?.running).toBe(9);
  });

  it("out of order: a batch made before the origin's last applied one is not applied (409)", async () => {
    const earlier = batch("wh-3", [down, { ...load, running: 1 }]);
    const later = batch("wh-3", [up, { ...load, running: 5 }]);
    expect((await postSigned(await signBatch(later))).status).toBe(200);
    const res = await postSigned(await signBatch(earlier));
    expect(res.status).toBe(409);
    const error = ((await res.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({
      type: "invalid_request_error",
      code: "stale_batch",
      param: "at",
      details: { lastAppliedAt: JSON.parse(later).at },
    });
    expect(String(error.message)).toContain("wh-3");
    const stats = await originStats("wh-3");
    expect(stats?.eligible).toBe(true);
    expect(stats?.engine?.running).toBe(5);
  });

  it("the old format (no id, no at) is refused with a 400 naming the missing field", async () => {
    const old = JSON.stringify({ origin: "wh-1", events: [down] });
    const res = await postSigned(await signBatch(old));
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({
      type: "invalid_request_error",
      code: "missing_required_parameter",
      param: "id",
    });
    expect(String(error.message)).toMatch(/^id is required: every batch carries a unique id/);
    const noAt = JSON.stringify({ origin: "wh-1", id: crypto.randomUUID(), events: [down] });
    const res2 = await postSigned(await signBatch(noAt));
    expect(res2.status).toBe(400);
    expect(((await res2.json()) as { error: { param: string } }).error.param).toBe("at");
    expect((await originStats("wh-1"))?.eligible).toBe(true);
  });

  it("a batch made outside the 5-minute window is refused with a 400 naming at", async () => {
    for (const at of [Date.now() - 301_000, Date.now() + 301_000]) {
      const res = await postSigned(await signBatch(batch("wh-1", [down], at)));
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: Record<string, unknown> }).error;
      expect(error).toMatchObject({ code: "invalid_value", param: "at" });
    }
    expect((await originStats("wh-1"))?.eligible).toBe(true);
  });

  it("one future-dated batch does not lock the origin's reports out: the next 90 are applied", async () => {
    // Issue 24: a signed batch with at = now + 45 s made the next 90 real batches 409.
    const ahead = await postSigned(await signBatch(batch("ah-1", [load], Date.now() + 45_000)));
    expect(ahead.status).toBe(400);
    const error = ((await ahead.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_value",
      param: "at",
    });
    expect(error.message).toMatch(/ahead of the router's clock/);
    const statuses = new Set<number>();
    for (let i = 0; i < 90; i++) {
      const events = [{ ...load, running: i }];
      statuses.add((await postSigned(await signBatch(batch("ah-1", events)))).status);
    }
    expect([...statuses]).toEqual([200]);
    const engine = (await originStats("ah-1", AHEAD_MODEL))?.engine;
    expect(engine).toMatchObject({ running: 89, freshness: 1 });
  });

  it("a captured health: down replayed after the pool's object restarts is not applied", async () => {
    const wentDown = await signBatch(batch("rs-1", [down]));
    expect((await postSigned(wentDown)).status).toBe(200);
    const cameBack = await signBatch(batch("rs-1", [{ type: "cache-reset" }, up]));
    expect((await postSigned(cameBack)).status).toBe(200);
    await evictDurableObject(env.ROUTER.getByName(RESTART_MODEL));

    const replay = await postSigned(wentDown);
    expect(replay.status).toBe(409);
    expect(await errorCode(replay)).toBe("stale_batch");
    expect(await (await postSigned(cameBack)).json()).toMatchObject({ duplicate: true });
    expect(await routes(RESTART_MODEL, "restarted")).toEqual({ status: 200, origin: "rs-1" });
  });
});
