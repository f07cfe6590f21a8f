import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chat,
  conversation,
  origin,
  outstanding,
  pool,
  putSettings,
  releaseHeld,
  waitFor,
} from "../../test/helpers.ts";

const POLICIES = ["cost", "cache-aware", "prefix-hash", "hybrid"] as const;
const fourOrigins = (tag: string, behaviour = "ok") =>
  [1, 2, 3, 4].map((n) => origin(`po-${tag}-${n}`, behaviour));

const HOT_HYBRID = "hot-hybrid";
const HOT_COST = "hot-cost";

beforeAll(async () => {
  const pools: Record<string, ReturnType<typeof pool>> = {};
  for (const type of POLICIES) pools[type] = pool(fourOrigins(type), { policy: { type } });
  pools[HOT_HYBRID] = pool(fourOrigins("hh", "hold"), {
    policy: { type: "hybrid", overflowBase: 0, overflowPer1kTokens: 0 },
  });
  // A prefill speed of 1 token/s keeps each held request's prefill queued at its origin.
  pools[HOT_COST] = pool(fourOrigins("hc", "hold"), {
    policy: { type: "cost", affinityPrice: 1, loadAffinity: 0 },
    prefillTokensPerSecond: 1,
  });
  await putSettings({ pools: pools as never });
});

afterAll(async () => {
  for (const tag of ["hh", "hc"]) for (const n of [1, 2, 3, 4]) await releaseHeld(`po-${tag}-${n}`);
});

async function routeOf(model: string, messages: unknown[]) {
  const res = await chat(model, messages);
  expect(res.status).toBe(200);
  await res.text();
  return {
    origin: res.headers.get("x-router-origin") as string,
    reason: res.headers.get("x-router-reason") as string,
    matched: Number(res.headers.get("x-router-matched-tokens")),
  };
}

describe.each(POLICIES)("%s", (policy) => {
  it("requests sharing a long prefix land on the same origin", async () => {
    const first = await routeOf(policy, conversation("locality", 0));
    for (let turns = 1; turns <= 4; turns++) {
      const next = await routeOf(policy, conversation("locality", turns));
      expect(next.origin).toBe(first.origin);
      if (policy === "cost" || policy === "cache-aware") expect(next.matched).toBeGreaterThan(0);
    }
    await waitFor(async () => (await outstanding(policy)) === 0);
  });

  it("distinct prefixes spread over the origins", async () => {
    const used = new Set<string>();
    for (let topic = 0; topic < 16; topic++) {
      used.add((await routeOf(policy, conversation(`spread-${topic}`, 0))).origin);
    }
    expect(used.size).toBeGreaterThanOrEqual(3);
  });
});

/** Opens a held stream and returns where it went; the stream stays open (outstanding). */
async function openHeld(model: string, messages: unknown[]) {
  const res = await chat(model, messages, { stream: true });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  return {
    origin: res.headers.get("x-router-origin") as string,
    reason: res.headers.get("x-router-reason") as string,
    finish: async () => {
      while (!(await reader.read()).done);
    },
  };
}

describe("a hot prefix overflows when its origin's load passes the threshold", () => {
  it("hybrid: the second concurrent request overflows to another origin", async () => {
    const hot = conversation("hot", 0);
    const first = await openHeld(HOT_HYBRID, hot);
    expect(first.reason).toBe("sticky");
    const second = await openHeld(HOT_HYBRID, hot);
    expect(second.reason).toBe("overflow");
    expect(second.origin).not.toBe(first.origin);
    for (const n of [1, 2, 3, 4]) await releaseHeld(`po-hh-${n}`);
    await Promise.all([first.finish(), second.finish()]);
    // Load gone, the prefix sticks to its origin again.
    await waitFor(async () => (await outstanding(HOT_HYBRID)) === 0);
    const third = await openHeld(HOT_HYBRID, hot);
    expect(third.origin).toBe(first.origin);
    await releaseHeld(third.origin);
    await third.finish();
  });

  it("cost: the prefix stays while its origin keeps up, then replicates", async () => {
    const hot = conversation("hot", 0);
    const opened = [await openHeld(HOT_COST, hot)];
    const home = opened[0]!.origin;
    for (let i = 0; i < 6 && opened.at(-1)!.origin === home; i++) {
      opened.push(await openHeld(HOT_COST, hot));
    }
    const reasons = opened.map((o) => o.reason);
    expect(reasons[1]).toBe("cache-hit");
    expect(opened[1]!.origin).toBe(home);
    expect(reasons.at(-1)).toBe("replicate");
    expect(opened.at(-1)!.origin).not.toBe(home);
    for (const n of [1, 2, 3, 4]) await releaseHeld(`po-hc-${n}`);
    await Promise.all(opened.map((o) => o.finish()));
    await waitFor(async () => (await outstanding(HOT_COST)) === 0);
  });
});
