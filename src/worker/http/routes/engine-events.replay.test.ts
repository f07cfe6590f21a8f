/**
 * Fault injection: webhook replay. Someone who captured an engine's signed reports (its
 * `health: down` when it died, then `cache-reset` + `up` when it came back) sends them again and
 * again while clients stream through the pool, against real local origins that hold each answer
 * open after its first chunk. What each side sees: the replays are answered as duplicates and
 * change nothing; every client request is served, conversations keep their origin and cached
 * prefix; and the pool's load counters return to zero once the streams end.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  chat,
  conversation,
  engineBatch,
  objectState,
  origin,
  outstanding,
  pool,
  postSigned,
  putSettings,
  releaseHeld,
  signBatch,
  waitFor,
} from "../../test/helpers.ts";

const MODEL = "fault-webhook-replay";
const ORIGINS = ["fw-1", "fw-2"];
const TOPICS = ["north", "south", "east", "west"];

beforeAll(async () => {
  await putSettings({ pools: { [MODEL]: pool(ORIGINS.map((id) => origin(id, "hold"))) } });
});

afterAll(async () => {
  for (const id of ORIGINS) await releaseHeld(id);
});

/** A streamed turn of a conversation, open at its first chunk (the origin holds the rest). */
async function openTurn(topic: string, turns: number) {
  const res = await chat(MODEL, conversation(topic, turns), { stream: true });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  expect((await reader.read()).done).toBe(false);
  return {
    origin: res.headers.get("x-router-origin") as string,
    matched: Number(res.headers.get("x-router-matched-tokens")),
    async rest(): Promise<string> {
      let text = "";
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        text += decoder.decode(r.value, { stream: true });
      }
      return text;
    },
  };
}

async function origins() {
  const state = await objectState(MODEL);
  return Object.fromEntries(
    (state?.router.origins ?? []).map((o) => [
      o.id,
      { eligible: o.eligible, owned: o.ownedTokens },
    ]),
  );
}

async function releaseAll(turns: { rest(): Promise<string> }[]): Promise<string[]> {
  for (const id of ORIGINS) await releaseHeld(id);
  return Promise.all(turns.map((t) => t.rest()));
}

it("webhook replay: replays are duplicates, clients are served, load returns to zero", async () => {
  const died = await signBatch(engineBatch("fw-1", [{ type: "health", status: "down" }]));
  const back = await signBatch(
    engineBatch("fw-1", [
      { type: "cache-reset" },
      { type: "health", status: "up" },
      { type: "load", running: 0, waiting: 0, kvUsage: 0 },
    ]),
  );
  expect((await postSigned(died)).status).toBe(200);
  expect((await postSigned(back)).status).toBe(200);

  const first = [];
  for (const topic of TOPICS) first.push(await openTurn(topic, 0));
  expect(new Set(first.map((t) => t.origin))).toEqual(new Set(ORIGINS));
  expect(await outstanding(MODEL)).toBe(TOPICS.length);
  const before = await origins();

  // The replays, in the order that would leave fw-1 down with an empty index if applied.
  const replayed = [];
  for (const captured of [back, died, back, died]) replayed.push(await postSigned(captured));
  replayed.push(...(await Promise.all([back, died, died].map(postSigned))));
  for (const res of replayed) {
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 0, models: [MODEL], duplicate: true });
  }
  expect(await origins()).toEqual(before);

  for (const body of await releaseAll(first)) expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
  await waitFor(async () => (await outstanding(MODEL)) === 0, 5000, "load to return to zero");

  // Each conversation's next turn still goes to its origin and finds its prefix cached.
  const next = [];
  for (const topic of TOPICS) next.push(await openTurn(topic, 1));
  expect(next.map((t) => t.origin)).toEqual(first.map((t) => t.origin));
  for (const turn of next) expect(turn.matched).toBeGreaterThan(0);
  for (const body of await releaseAll(next)) expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
  await waitFor(async () => (await outstanding(MODEL)) === 0, 5000, "load to return to zero");
});
