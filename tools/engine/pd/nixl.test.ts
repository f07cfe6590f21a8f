import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../../src/core/prompt/prompt-key.ts";
import {
  type Answer,
  cachedOf,
  chatBody,
  engine,
  post,
  usageOf,
} from "../../test-support/pd-pair.ts";
import type { RunningEngine } from "../engine-server.ts";
import { startSideServer } from "./side-server.ts";

/** The prefill leg's params, as a router sends them (toy_proxy_server.py). */
const PREFILL_PARAMS = {
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
};

const prefillLeg = (topic: string) =>
  chatBody(topic, { max_tokens: 1, stream: false, kv_transfer_params: PREFILL_PARAMS });

type Params = Record<string, unknown>;
const paramsOf = (a: Answer) => a.json.kv_transfer_params as Params;

let prefill: RunningEngine;
let decode: RunningEngine;
let recompute: RunningEngine;
const decodeLog: string[] = [];

beforeAll(async () => {
  prefill = await engine("p", { protocol: "vllm-nixl", role: "prefill", kvLeaseMs: 300 });
  decode = await engine("d", { protocol: "vllm-nixl", role: "decode" }, decodeLog);
  recompute = await engine("r", {
    protocol: "vllm-nixl",
    role: "decode",
    loadFailurePolicy: "recompute",
  });
});
afterAll(() => Promise.all([prefill, decode, recompute].map((e) => e.close())));

/** A prefill leg's params with `remote_host` made reachable, as the router overwrites it. */
async function prefilled(topic: string): Promise<Params> {
  const answer = await post(prefill.url, prefillLeg(topic), { "x-request-id": `req-${topic}` });
  expect(answer.status).toBe(200);
  return { ...paramsOf(answer), remote_host: "127.0.0.1" };
}

describe("vllm-nixl prefill engine", () => {
  it("answers the params a decode engine needs, named after the request id", async () => {
    const answer = await post(prefill.url, prefillLeg("alpha"), { "x-request-id": "req-1" });
    expect(answer.status).toBe(200);
    expect(usageOf(answer.json).completion_tokens).toBe(1);
    const blocks = Math.ceil(usageOf(answer.json).prompt_tokens / 64);
    expect(paramsOf(answer)).toEqual({
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_block_ids: expect.any(Array),
      remote_engine_id: expect.stringMatching(/^p-/),
      remote_request_id: "chatcmpl-req-1",
      remote_host: "localhost",
      remote_port: Number(prefill.pd?.endpoint?.split(":")[1]),
      tp_size: 1,
    });
    expect(paramsOf(answer).remote_block_ids).toHaveLength(blocks);
  });

  it("serves a request without params whole, with no params in its answer", async () => {
    const answer = await post(prefill.url, chatBody("plain"));
    expect(answer.status).toBe(200);
    expect(answer.json.kv_transfer_params).toBeUndefined();
    expect(usageOf(answer.json).completion_tokens).toBe(4);
  });
});

describe("vllm-nixl decode engine", () => {
  it("pulls the KV and counts every prompt token but the last as cached, as vLLM does", async () => {
    const params = await prefilled("bravo");
    const answer = await post(decode.url, chatBody("bravo", { kv_transfer_params: params }));
    expect(answer.status).toBe(200);
    const usage = usageOf(answer.json);
    expect(usage.completion_tokens).toBe(4);
    expect(cachedOf(answer.json)).toBe(usage.prompt_tokens - 1);
    // The blocks now sit in the decode engine's prefix cache: a repeat without params hits them.
    const again = await post(decode.url, chatBody("bravo"));
    expect(cachedOf(again.json)).toBe(Math.floor(usage.prompt_tokens / 64) * 64);
  });

  it("streams after the transfer", async () => {
    const params = await prefilled("charlie");
    const body = chatBody("charlie", {
      kv_transfer_params: params,
      stream: true,
      stream_options: { include_usage: true },
    });
    const answer = await post(decode.url, body);
    const usage = answer.events.at(-1)?.usage as { prompt_tokens: number };
    expect(answer.events.length).toBeGreaterThan(2);
    expect(cachedOf(answer.events.at(-1) as Record<string, unknown>)).toBe(usage.prompt_tokens - 1);
  });

  it("reads only the blocks its own cache lacks", async () => {
    const reads: unknown[] = [];
    const side = await startSideServer("127.0.0.1", 0, async (_m, _p, body) => {
      reads.push(body);
      const ids = (body as { block_ids: number[] }).block_ids;
      return { status: 200, body: { hashes: ids.map(() => 0) } };
    });
    // The decode engine first holds the prompt's first 400 words whole.
    await post(decode.url, chatBody("delta", {}, 400));
    const key = promptKey(chatBody("delta", {}, 500));
    const blocks =
      key.chunkHashes.length + (key.promptTokens > key.chunkHashes.length * 64 ? 1 : 0);
    const blockIds = Array.from({ length: blocks }, (_, i) => 100 + i);
    const params = {
      do_remote_prefill: true,
      remote_engine_id: "e",
      remote_request_id: "r",
      remote_host: "127.0.0.1",
      remote_port: side.port,
      remote_block_ids: blockIds,
    };
    const answer = await post(decode.url, chatBody("delta", { kv_transfer_params: params }, 500));
    await side.close();
    const held = (reads[0] as { block_ids: number[] }).block_ids;
    expect(held.length).toBeGreaterThan(0);
    expect(held).toEqual(blockIds.slice(blockIds.length - held.length));
    expect(held.length).toBeLessThan(blockIds.length);
    // The hashes it was sent are not this prompt's: a transfer the engine fails (policy fail).
    expect(answer.status).toBe(500);
  });

  it("frees a transfer once read: a second read fails as the policy says", async () => {
    const params = await prefilled("echo");
    expect((await post(decode.url, chatBody("echo", { kv_transfer_params: params }))).status).toBe(
      200,
    );
    const failed = await post(decode.url, chatBody("echo", { kv_transfer_params: params }));
    expect(failed.status).toBe(500);
    expect((failed.json.error as { message: string }).message).toMatch(/KV load failed.*404/);
  });

  it("after the prefill's lease (kv_lease_duration) the blocks are gone: fail, or recompute", async () => {
    const a = await prefilled("foxtrot");
    const b = await prefilled("golf");
    await new Promise((resolve) => setTimeout(resolve, 400));
    const failed = await post(decode.url, chatBody("foxtrot", { kv_transfer_params: a }));
    expect(failed.status).toBe(500);
    const streamed = await post(
      decode.url,
      chatBody("foxtrot", { kv_transfer_params: a, stream: true }),
    );
    expect(streamed.status).toBe(200);
    expect(streamed.events).toEqual([
      { error: expect.objectContaining({ message: expect.stringMatching(/KV load failed/) }) },
    ]);
    const recomputed = await post(recompute.url, chatBody("golf", { kv_transfer_params: b }));
    expect(recomputed.status).toBe(200);
    expect(cachedOf(recomputed.json)).toBe(0);
  });

  it("recomputes on invalid params whatever the policy, logging it as vLLM does", async () => {
    const params = { ...(await prefilled("hotel")), remote_engine_id: undefined };
    const answer = await post(decode.url, chatBody("hotel", { kv_transfer_params: params }));
    expect(answer.status).toBe(200);
    expect(cachedOf(answer.json)).toBe(0);
    expect(decodeLog.some((l) => /invalid KVTransferParams \(remote_engine_id\)/.test(l))).toBe(
      true,
    );
  });

  it("fails a transfer of another prompt's blocks", async () => {
    const params = await prefilled("india");
    const answer = await post(decode.url, chatBody("juliet", { kv_transfer_params: params }));
    expect(answer.status).toBe(500);
  });
});
