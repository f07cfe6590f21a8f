import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../core/prompt/prompt-key.ts";
import type { RouteDecision } from "../../core/router/router-types.ts";
import type { RequestReport } from "../request-record/request-report.ts";
import { chat, conversation, origin, pool, putSettings } from "../test/helpers.ts";
import type { Admitted } from "./rpc-types.ts";

const HELD = "admission-held";
const LEAVE = "admission-leave";
const SHED = "admission-shed";

/** One origin that prefills 1 token/s: once it has a request in flight, everything waits. */
const slow = (tag: string, maxQueued: number, queueTimeoutMs = 30_000) =>
  pool([origin(`adm-${tag}`)], {
    prefillTokensPerSecond: 1,
    admission: { maxWaitMs: 0, queueTimeoutMs, maxQueued },
  });

beforeAll(async () => {
  await putSettings({
    pools: { [HELD]: slow("h", 5), [LEAVE]: slow("l", 1), [SHED]: slow("s", 0) },
  });
});

/** The object of `model`, its settings installed by one request through the Worker. */
async function objectOf(model: string) {
  const res = await chat(model, conversation("warm", 1));
  expect(res.status).toBe(200);
  await res.text();
  const stub = env.ROUTER.getByName(model);
  // The Worker reports the end after answering: wait until the object has it.
  for (let i = 0; i < 100 && (await stub.state())?.router.outstanding !== 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const version = (await stub.state())?.version;
  if (!version) throw new Error("object has no settings");
  const admit = (id: string, topic: string) => {
    const key = promptKey({ model, messages: conversation(topic, 1) });
    const call = { chunkHashes: key.chunkHashes, promptTokens: key.promptTokens, id, version };
    return stub.admit(call) as Promise<unknown> as Promise<Admitted | null>;
  };
  return { stub, admit };
}

function routed(answer: Admitted | null): RouteDecision {
  if (answer?.kind !== "routed") throw new Error(`not routed: ${JSON.stringify(answer)}`);
  return answer.decision;
}

const ended: RequestReport = {
  origin: "adm-h",
  outcome: "ok",
  failures: [],
  matchedTokens: 0,
  objectMs: null,
  fallback: null,
};

describe("admission in the pool's object", () => {
  it("holds a request while the origin is busy and routes it when a completion frees room", async () => {
    const { stub, admit } = await objectOf(HELD);
    const first = routed(await admit("h1", "one"));
    let answer: Admitted | null = null;
    const held = admit("h2", "two").then((a) => {
      answer = a;
      return a;
    });
    // Give the held call time to reach the object: it must still be waiting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answer).toBeNull();
    await stub.complete(first.ticket as string, ended);
    const second = routed(await held);
    expect(second.origin).toBe("adm-h");
    const state = await stub.state();
    expect(state?.router.outstanding).toBe(1);
  });

  it("a waiting client that leaves frees its place for the next", async () => {
    const { stub, admit } = await objectOf(LEAVE);
    routed(await admit("l1", "one"));
    const leaving = admit("l2", "two");
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The room (maxQueued 1) is full: a newcomer is shed at once.
    expect(await admit("l3", "three")).toMatchObject({ kind: "shed", shed: { status: 503 } });
    expect(await stub.leave("l2")).toBe(true);
    expect(await leaving).toEqual({ kind: "left" });
    expect(await stub.leave("l2")).toBe(false);
    const next = admit("l4", "four");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stub.leave("l4")).toBe(true);
    expect(await next).toEqual({ kind: "left" });
  });

  it("a shed request gets 503 in OpenAI's shape with Retry-After, and never reaches an origin", async () => {
    const { admit } = await objectOf(SHED);
    routed(await admit("s1", "one"));
    const res = await chat(SHED, conversation("two", 1));
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: "server_error", code: "overloaded" });
    expect(body.error.message).toContain("queue-full");
  });

  it("refuses a priority header that names no priority, naming the header", async () => {
    const res = await chat(SHED, conversation("three", 1), {
      headers: { "x-router-priority": "urgent" },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string } };
    expect(body.error).toMatchObject({ code: "invalid_priority", param: "x-router-priority" });
  });
});
