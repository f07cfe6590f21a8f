import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RouterObject } from "../../objects/router-object.ts";
import {
  chat,
  conversation,
  origin,
  outstanding,
  pool,
  putSettings,
  waitFor,
} from "../../test/helpers.ts";

const MODEL = "fallback-model";
const SLOW = "fallback-slow-model";

beforeAll(async () => {
  const origins = [1, 2, 3, 4].map((n) => origin(`fb-${n}`));
  await putSettings({
    pools: {
      [MODEL]: pool(origins, { policy: { type: "cost" } }),
      [SLOW]: pool([origin("fb-slow-1"), origin("fb-slow-2")], { routeTimeoutMs: 50 }),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function send(model: string, messages: unknown[]) {
  const res = await chat(model, messages);
  expect(res.status).toBe(200);
  await res.text();
  return {
    origin: res.headers.get("x-router-origin"),
    policy: res.headers.get("x-router-policy"),
    reason: res.headers.get("x-router-reason"),
    matched: Number(res.headers.get("x-router-matched-tokens")),
  };
}

describe("fallback when the pool's object cannot answer", () => {
  it("routes alone with prefix-hash while the object throws, and recovers when it is back", async () => {
    // Fault injection at the RPC boundary: the object's route method fails as a broken or
    // unreachable object would; the Worker under test is untouched.
    const route = vi.spyOn(RouterObject.prototype, "route").mockImplementation(() => {
      throw new Error("object unavailable");
    });
    const during = [];
    for (let turns = 0; turns < 3; turns++)
      during.push(await send(MODEL, conversation("outage", turns)));
    expect(route).toHaveBeenCalled();
    for (const d of during) {
      expect(d.reason).toBe("fallback-error");
      expect(d.policy).toBe("prefix-hash");
    }
    // prefix-hash keeps a conversation on one origin even without the object.
    expect(new Set(during.map((d) => d.origin)).size).toBe(1);

    route.mockRestore();
    const first = await send(MODEL, conversation("recovered", 0));
    expect(first.policy).toBe("cost");
    expect(first.reason).not.toMatch(/^fallback/);
    const second = await send(MODEL, conversation("recovered", 1));
    expect(second.reason).toBe("cache-hit");
    expect(second.origin).toBe(first.origin);
    expect(second.matched).toBeGreaterThan(0);
  });

  it("routes alone when the object answers after the deadline, and releases the late lease", async () => {
    const stub = env.ROUTER.getByName(SLOW);
    await send(SLOW, conversation("warm", 0));
    // Hold the object's input gate: calls queue as they would behind a slow or distant object.
    const busy = runInDurableObject(stub, (_, state) =>
      state.blockConcurrencyWhile(() => new Promise((resolve) => setTimeout(resolve, 400))),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    const during = await send(SLOW, conversation("slow", 0));
    expect(Date.now() - started).toBeLessThan(400);
    expect(during.reason).toBe("fallback-timeout");
    await busy;
    // The decision that came late was given back rather than left as load.
    await waitFor(async () => (await outstanding(SLOW)) === 0, 5000, "late lease release");
    const after = await send(SLOW, conversation("slow", 1));
    expect(after.reason).not.toMatch(/^fallback/);
  });
});
