import { beforeAll, describe, expect, it, vi } from "vitest";
import { CACHED_TOKENS, PD_PREFILL_CACHED } from "../test/fixture.ts";
import {
  hits,
  origin,
  originBase,
  pool,
  putSettings,
  received,
  refusedBase,
  waitFor,
} from "../test/helpers.ts";
import { NIXL_PREFILL_PARAMS } from "./leg-bodies.ts";
import { ALWAYS, appended, clientBody, pdRole, post, settledState } from "./test-pools.ts";

const nixl = (role: "prefill" | "decode", engineHost?: string) =>
  pdRole("vllm-nixl", role, engineHost ? { engineHost } : {});

beforeAll(async () => {
  await putSettings({
    pools: {
      nixl: pool(
        [
          origin("nx-p", "pd-prefill", nixl("prefill", "10.1.2.3")),
          origin("nx-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "nixl-log": pool(
        [
          origin("nl-p", "pd-prefill", nixl("prefill")),
          origin("nl-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "nixl-stream": pool(
        [
          origin("ns-p", "pd-prefill", nixl("prefill")),
          origin("ns-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "nixl-prefill-500": pool(
        [origin("n5-p", "fail500", nixl("prefill")), origin("n5-d", "pd-decode", nixl("decode"))],
        { disaggregation: ALWAYS },
      ),
      "nixl-prefill-down": pool(
        [
          { id: "nd-p", url: `${refusedBase}/nd-p`, ...nixl("prefill") },
          origin("nd-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "nixl-prefill-400": pool(
        [origin("n4-p", "pd-reject", nixl("prefill")), origin("n4-d", "pd-decode", nixl("decode"))],
        { disaggregation: ALWAYS },
      ),
      "nixl-decode-500": pool(
        [
          origin("nf-p", "pd-prefill", nixl("prefill")),
          origin("nf-d1", "fail500", nixl("decode")),
          origin("nf-d2", "pd-decode", nixl("decode")),
        ],
        { disaggregation: ALWAYS, policy: { type: "round-robin" } },
      ),
    },
  });
});

describe("vllm-nixl", () => {
  it("sends the prefill leg, then the decode leg with the params it returned", async () => {
    const body = clientBody("nixl", "relay", {
      max_tokens: 50,
      max_completion_tokens: 50,
      min_tokens: 3,
      seed: 7,
    });
    const res = await post(body, { authorization: "Bearer client-key" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("nx-d");
    expect(res.headers.get("x-router-prefill-origin")).toBe("nx-p");
    expect(res.headers.get("x-router-pd")).toBe("remote");
    // The client gets the decode engine's answer, whose count is the KV it was sent.
    const usage = ((await res.json()) as { usage: Record<string, unknown> }).usage;
    expect(usage.prompt_tokens_details).toEqual({
      cached_tokens: (usage.prompt_tokens as number) - 1,
    });

    const [prefill] = await received("nx-p");
    const [decode] = await received("nx-d");
    const { min_tokens, ...client } = JSON.parse(body);
    expect(min_tokens).toBe(3);
    expect(JSON.parse(prefill!.body)).toEqual({
      ...client,
      kv_transfer_params: NIXL_PREFILL_PARAMS,
      stream: false,
      max_tokens: 1,
      max_completion_tokens: 1,
    });
    const requestId = prefill!.headers["x-request-id"];
    expect(requestId).toBeTruthy();
    expect(decode!.headers["x-request-id"]).toBe(requestId);
    for (const leg of [prefill!, decode!]) expect(leg.headers.authorization).toBeUndefined();
    // The client's bytes, with the prefill's params; remote_host is the prefill's engineHost.
    expect(decode!.body).toBe(
      appended(body, {
        kv_transfer_params: {
          do_remote_prefill: true,
          do_remote_decode: false,
          remote_block_ids: [1, 2, 3],
          remote_engine_id: "engine-nx-p",
          remote_request_id: `chatcmpl-${requestId}`,
          remote_host: "10.1.2.3",
          remote_port: 5600,
          tp_size: 1,
        },
      }),
    );
    // The index learns from the prefill leg's cached_tokens, not the decode's.
    const state = await settledState("nixl");
    expect(state.accuracy.reports).toBe(1);
    expect(state.accuracy.cachedTokens).toBe(PD_PREFILL_CACHED);
    expect(state.pd.byReason["pd:remote"]).toBe(1);
  });

  it("logs how the request was served and the prefill leg's cached tokens", async () => {
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      if (typeof line === "string" && line.includes('"llm_request"')) lines.push(line);
    });
    await (await post(clientBody("nixl-log", "logged"))).text();
    await waitFor(() => lines.length > 0, 5000, "the log line");
    log.mockRestore();
    expect(JSON.parse(lines[0]!)).toMatchObject({
      origin: "nl-d",
      pd: "remote",
      prefillOrigin: "nl-p",
      prefillCachedTokens: PD_PREFILL_CACHED,
    });
  });

  it("streams the decode leg through byte for byte; the prefill leg is never streamed", async () => {
    const body = clientBody("nixl-stream", "café €", {
      stream: true,
      stream_options: { include_usage: true },
    });
    const res = await post(body);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const [prefill] = await received("ns-p");
    const [decode] = await received("ns-d");
    const prefillBody = JSON.parse(prefill!.body);
    expect(prefillBody.stream).toBe(false);
    expect(prefillBody.stream_options).toBeUndefined();
    expect(JSON.parse(decode!.body).stream_options).toEqual({ include_usage: true });
    const direct = await fetch(`${originBase}/pd-decode/ns-d/v1/chat/completions`, {
      method: "POST",
      body: decode!.body,
    });
    expect(bytes).toEqual(new Uint8Array(await direct.arrayBuffer()));
    expect((await settledState("nixl-stream")).accuracy.cachedTokens).toBe(PD_PREFILL_CACHED);
  });

  it.each([
    ["answers 500", "nixl-prefill-500", "n5"],
    ["refuses connections", "nixl-prefill-down", "nd"],
  ])("a prefill origin that %s leaves the decode origin to serve alone", async (_, model, id) => {
    const body = clientBody(model, "alone");
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe(`${id}-d`);
    expect(res.headers.get("x-router-pd")).toBe("prefill-failed");
    expect(res.headers.get("x-router-prefill-origin")).toBeNull();
    await res.text();
    // The client's own bytes, with no params: the decode engine prefills itself.
    expect((await received(`${id}-d`)).map((r) => r.body)).toEqual([body]);
    const state = await settledState(model);
    expect(state.pd.prefillFailed).toBe(1);
    // Served alone, the decode origin's own count is a cache hit to learn from.
    expect(state.accuracy.cachedTokens).toBe(CACHED_TOKENS);
    const prefill = state.origins.find((o) => o.id === `${id}-p`);
    expect(prefill?.outstanding).toBe(0);
  });

  it("a prefill origin's 4xx goes to the client; the decode origin is not asked", async () => {
    const res = await post(clientBody("nixl-prefill-400", "bad"));
    expect(res.status).toBe(400);
    expect(res.headers.get("x-router-origin")).toBe("n4-p");
    expect(await res.json()).toEqual({ error: { message: "max_tokens is too large", code: 400 } });
    expect(await hits("n4-d")).toBe(0);
    expect((await settledState("nixl-prefill-400")).pd.prefillFailed).toBe(0);
  });

  it("a decode origin that fails before its first byte: an alternate serves alone, no params", async () => {
    // Round-robin sends one of two requests to the failing decode origin first.
    const bodies = [clientBody("nixl-decode-500", "one"), clientBody("nixl-decode-500", "two")];
    const answers = await Promise.all(bodies.map((b) => post(b)));
    const failedOver = answers.find((r) => r.headers.get("x-router-attempts") === "2");
    expect(failedOver?.headers.get("x-router-origin")).toBe("nf-d2");
    expect(failedOver?.headers.get("x-router-pd")).toBe("decode-failed");
    expect(failedOver?.headers.get("x-router-prefill-origin")).toBeNull();
    await Promise.all(answers.map((r) => r.text()));
    const d2 = (await received("nf-d2")).map((r) => r.body);
    // One leg carried the params (the request decided for nf-d2), one the client's bytes alone.
    expect(d2.filter((b) => bodies.includes(b))).toHaveLength(1);
    expect(d2.filter((b) => b.includes('"kv_transfer_params"'))).toHaveLength(1);
    const state = await settledState("nixl-decode-500");
    expect(state.failures["status-5xx"]).toBe(1);
  });
});
