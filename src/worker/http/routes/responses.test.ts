/**
 * `/v1/responses` through the Worker's entry point, against the test origins' Responses API
 * (test/responses-origin.node.ts, a store per origin like vLLM's): validation, routing by
 * prefix, follow-ups pinned to the origin that stored their `previous_response_id` (even one
 * the policy would not pick), the errors when that cannot be, GET and DELETE, P/D refusal, and
 * an edge pool's follow-up decided by another isolate.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import { ReplicaRegistry } from "../../coordination/edge/replica-registry.ts";
import { routeStoredAtEdge } from "../../coordination/edge/route-stored-at-edge.ts";
import { frontFor } from "../../coordination/front.ts";
import { ApiError } from "../../errors/api-error.ts";
import { pdRole } from "../../pd/test-pools.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import {
  admin,
  call,
  engineBatch,
  objectState,
  origin,
  outstanding,
  pool,
  postSigned,
  putSettings,
  signBatch,
  waitFor,
} from "../../test/helpers.ts";

const RR = "resp-rr";
const PREFIX = "resp-prefix";
const GONE = "resp-gone";
const DRAIN = "resp-drain";
const PD = "resp-pd";
const EDGE = "resp-edge";
const BPT = "resp-bpt";
const COUNT = "resp-count";
const COUNT_EDGE = "resp-count-edge";
const origins = (tag: string, n = 3) =>
  Array.from({ length: n }, (_, i) => origin(`resp-${tag}-${i + 1}`));

const settings = (gone = origins("g")) => ({
  pools: {
    // Round-robin moves every request on: a follow-up that stays put was pinned.
    [RR]: pool(origins("rr"), { policy: { type: "round-robin" } }),
    [PREFIX]: pool(origins("p"), { policy: { type: "prefix-hash" } }),
    [GONE]: pool(gone, { policy: { type: "round-robin" } }),
    [DRAIN]: pool(origins("d"), { policy: { type: "round-robin" } }),
    [BPT]: pool(origins("b", 1)),
    [COUNT]: pool(origins("c", 2)),
    [COUNT_EDGE]: pool(origins("ce", 2), {
      coordination: "edge",
      edge: { flushMs: 10, warmMs: 0 },
    }),
    [PD]: pool([
      origin("resp-pd-p", "pd-prefill", pdRole("vllm-nixl", "prefill")),
      origin("resp-pd-d", "pd-decode", pdRole("vllm-nixl", "decode")),
    ]),
    [EDGE]: pool(origins("e"), {
      policy: { type: "round-robin" },
      coordination: "edge",
      edge: { flushMs: 10, warmMs: 0 },
    }),
  },
});

beforeAll(async () => {
  await putSettings(settings() as never);
});

function create(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call("/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

const INSTRUCTIONS = "You are a careful coding agent. Follow the repository's style. ".repeat(40);

interface Turn {
  status: number;
  origin: string | null;
  reason: string | null;
  json: Record<string, unknown>;
}

async function turn(body: Record<string, unknown>): Promise<Turn> {
  const res = await create({ instructions: INSTRUCTIONS, ...body });
  const text = await res.text();
  const json = body.stream && res.status === 200 ? completedOf(text) : JSON.parse(text);
  return {
    status: res.status,
    origin: res.headers.get("x-router-origin"),
    reason: res.headers.get("x-router-reason"),
    json,
  };
}

/** The response of a stream's `response.completed` event. */
function completedOf(sse: string): Record<string, unknown> {
  const line = sse.split("\n").find((l) => l.includes('"response.completed"')) as string;
  return JSON.parse(line.slice("data: ".length)).response;
}

/** The router learned `id` (the answer's end, then one RPC, both in waitUntil). */
async function learned(model: string, id: string) {
  const { pool: p } = await ref(model);
  await waitFor(
    async () => (await env.ROUTER.getByName(model).storedResponse(id, p.storedResponses)) !== null,
    5000,
    `${id} to be learned`,
  );
}

async function ref(model: string) {
  const s = await currentSettings(env);
  const p = s.pool(model);
  if (!p) throw new Error(`no pool ${model}`);
  return { model, pool: p, version: s.version(model) };
}

describe("POST /v1/responses: validation", () => {
  it.each([
    [{ input: 5 }, "input"],
    [{ input: [1] }, "input.0"],
    [{ input: [{ type: "" }] }, "input.0.type"],
    [{ input: "x", tools: {} }, "tools"],
    [{ input: "x", instructions: 3 }, "instructions"],
    [{ input: "x", previous_response_id: "resp 1" }, "previous_response_id"],
    [{ input: "x", store: "yes" }, "store"],
    [{ input: "x", stream: 1 }, "stream"],
  ])("%j is a 400 naming %s", async (body, param) => {
    const res = await create({ model: RR, ...body });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ type: "invalid_request_error", param });
  });

  it("a missing model is a 400; an unknown one a 404", async () => {
    expect((await create({ input: "x" })).status).toBe(400);
    const res = await create({ model: "resp-nope", input: "x" });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "model_not_found" } });
  });

  it("a disaggregated pool refuses it clearly", async () => {
    const res = await create({ model: PD, input: "x" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "pd_unsupported", param: "model" },
    });
  });
});

describe("POST /v1/responses: routing", () => {
  it("requests sharing long instructions land together (prefix-hash)", async () => {
    const first = await turn({ model: PREFIX, input: "first question", store: false });
    expect(first.status).toBe(200);
    for (const input of ["second", "third", "fourth"]) {
      expect((await turn({ model: PREFIX, input, store: false })).origin).toBe(first.origin);
    }
  });

  it.each([false, true])(
    "stream %s: a previous_response_id chain stays on the origin that stored it",
    async (stream) => {
      const first = await turn({ model: RR, input: "turn 0", stream });
      expect(first.status).toBe(200);
      let previous = first.json.id as string;
      for (let t = 1; t <= 4; t++) {
        await learned(RR, previous);
        const next = await turn({
          model: RR,
          input: `turn ${t}`,
          previous_response_id: previous,
          stream,
        });
        expect(next).toMatchObject({
          status: 200,
          origin: first.origin,
          reason: "stored-response",
        });
        previous = next.json.id as string;
      }
    },
  );

  it("an unknown previous_response_id is OpenAI's 400 previous_response_not_found", async () => {
    const res = await create({ model: RR, input: "x", previous_response_id: "resp_unknown" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: {
        type: "invalid_request_error",
        code: "previous_response_not_found",
        param: "previous_response_id",
      },
    });
  });

  it("a response stored with store: false is not remembered", async () => {
    const first = await turn({ model: RR, input: "not stored", store: false });
    const res = await create({ model: RR, input: "x", previous_response_id: first.json.id });
    expect(res.status).toBe(400);
  });

  it("a follow-up whose origin left the pool is previous_response_not_found", async () => {
    const first = await turn({ model: GONE, input: "to be gone" });
    await learned(GONE, first.json.id as string);
    const left = origins("g").filter((o) => o.id !== first.origin);
    await putSettings(settings(left) as never);
    try {
      const res = await create({ model: GONE, input: "x", previous_response_id: first.json.id });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("previous_response_not_found");
      expect(error.message).toMatch(/left this model's pool/);
    } finally {
      await putSettings(settings() as never);
    }
  });

  it("a follow-up whose origin is draining is a 503 with Retry-After, never another origin", async () => {
    const first = await turn({ model: DRAIN, input: "to drain" });
    await learned(DRAIN, first.json.id as string);
    const down = engineBatch(first.origin as string, [{ type: "health", status: "draining" }]);
    expect((await postSigned(await signBatch(down))).status).toBe(200);
    const res = await create({ model: DRAIN, input: "x", previous_response_id: first.json.id });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toMatchObject({
      error: { type: "server_error", code: "stored_response_unavailable" },
    });
    const up = engineBatch(first.origin as string, [{ type: "health", status: "up" }]);
    await postSigned(await signBatch(up));
  });
});

describe("bytes per token", () => {
  // Issue 22 mends, item 1: a follow-up's bytes are its new items only, its engine's prompt
  // the whole stored conversation, so each one pulled the pool's learned ratio down.
  it("a previous_response_id follow-up does not teach the pool's bytes per token", async () => {
    const learnedRatio = async () => (await objectState(BPT))?.router.bytesPerToken;
    const first = await turn({ model: BPT, input: "turn 0" });
    await learned(BPT, first.json.id as string);
    await waitFor(async () => (await learnedRatio())?.samples === 1, 5000, "the first sample");
    const before = await learnedRatio();
    let previous = first.json.id as string;
    for (let t = 1; t <= 3; t++) {
      const next = await turn({ model: BPT, input: `turn ${t}`, previous_response_id: previous });
      expect(next).toMatchObject({ status: 200, reason: "stored-response" });
      // The engine counted the stored conversation: far more tokens than the bytes sent show.
      const usage = next.json.usage as { input_tokens: number };
      expect(usage.input_tokens).toBeGreaterThan(
        ((first.json.usage as typeof usage).input_tokens * 3) / 2,
      );
      previous = next.json.id as string;
      await learned(BPT, previous);
      await waitFor(async () => (await outstanding(BPT)) === 0, 5000, "the follow-up's report");
    }
    expect(await learnedRatio()).toEqual(before);
  });
});

describe("when the pool's object cannot answer", () => {
  it.each([RR, EDGE])(
    "%s: a follow-up is a 503 to retry, never sent to a guessed origin",
    async (model) => {
      const down = { routeStored: () => Promise.reject(new Error("object down")) };
      const ROUTER = {
        idFromName: (name: string) => env.ROUTER.idFromName(name),
        get: () => ({ ...down, storedResponse: down.routeStored }),
      };
      const broken = { ...env, ROUTER } as unknown as Env;
      const r = await ref(model);
      const key = promptKey({ model, input: "x" }, r.pool.chunkBytes, "responses");
      const ctx = createExecutionContext();
      const failed = await frontFor(broken, r)
        .routeStored("resp_x", key, { ctx, cf: undefined })
        .catch((e: unknown) => e);
      await waitOnExecutionContext(ctx);
      expect(failed).toBeInstanceOf(ApiError);
      expect(failed).toMatchObject({ status: 503, code: "stored_response_unavailable" });
      expect((failed as ApiError).options.headers).toEqual({ "retry-after": "1" });
    },
  );
});

describe("GET and DELETE /v1/responses/{id}", () => {
  it("go to the origin that stored it; DELETE makes the router forget it", async () => {
    const first = await turn({ model: RR, input: "keep me" });
    const id = first.json.id as string;
    await learned(RR, id);
    const got = await call(`/v1/responses/${id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("x-router-origin")).toBe(first.origin);
    expect(await got.json()).toMatchObject({ id, object: "response" });
    const items = await call(`/v1/responses/${id}/input_items`);
    expect(items.status).toBe(200);
    expect(await items.json()).toMatchObject({ object: "list" });
    const deleted = await call(`/v1/responses/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ id, deleted: true });
    await waitFor(
      async () => (await call(`/v1/responses/${id}`)).status === 404,
      5000,
      "the router to forget the deleted id",
    );
    const again = await create({ model: RR, input: "x", previous_response_id: id });
    expect(again.status).toBe(400);
  });

  it("an id no pool knows is a 404 in OpenAI's shape", async () => {
    const res = await call("/v1/responses/resp_nobody");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "response_not_found" },
    });
  });
});

describe("/admin/state", () => {
  // Issue 22 mends, item 4: the pool's stored-response ids were nowhere to be seen.
  it.each([COUNT, COUNT_EDGE])(
    "%s: shows how many stored-response ids the pool holds",
    async (model) => {
      const count = async () =>
        ((await (await admin(`/admin/state?model=${model}`)).json()) as { storedResponses: number })
          .storedResponses;
      expect(await count()).toBe(0);
      const ids: string[] = [];
      for (const input of ["one", "two"]) {
        const stored = await turn({ model, input });
        ids.push(stored.json.id as string);
        await learned(model, stored.json.id as string);
      }
      expect((await turn({ model, input: "not stored", store: false })).status).toBe(200);
      expect(await count()).toBe(2);
      expect((await call(`/v1/responses/${ids[0]}`, { method: "DELETE" })).status).toBe(200);
      await waitFor(async () => (await count()) === 1, 5000, "the deleted id to be forgotten");
    },
  );
});

describe("edge pools", () => {
  it("a follow-up another isolate decides goes to the origin that stored it", async () => {
    const first = await turn({ model: EDGE, input: "edge turn 0" });
    expect(first.status).toBe(200);
    const id = first.json.id as string;
    await learned(EDGE, id);
    // Another isolate (its own replica, never having seen the first turn) decides.
    const ctx = createExecutionContext();
    const r = await ref(EDGE);
    const key = promptKey({ model: EDGE, input: "edge turn 1" }, r.pool.chunkBytes, "responses");
    const routed = await routeStoredAtEdge(
      env,
      ctx,
      r,
      id,
      key,
      undefined,
      new ReplicaRegistry("other"),
    );
    expect(routed.decision).toMatchObject({ origin: first.origin, reason: "stored-response" });
    expect(routed.coordination).toBe("edge");
    await routed.ledger.cancel(routed.decision.ticket as string);
    await waitOnExecutionContext(ctx);
    // And through the Worker's entry point.
    const next = await turn({ model: EDGE, input: "edge turn 1", previous_response_id: id });
    expect(next).toMatchObject({ status: 200, origin: first.origin, reason: "stored-response" });
  });
});
