/**
 * Bodies shaped to cost the edge the most (issue 9, items 1 and 2): long token-id prompts, deep
 * nesting, more objects, keys or strings than the structural budget. Each is either routed or
 * refused with a 400 naming the field, never a 500. Their cost is measured by
 * `npm run bench:core` (worst request shapes), not asserted here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, hits, origin, pool, putSettings } from "../../test/helpers.ts";

const MODEL = "hostile-bodies-model";
const hi = { role: "user", content: "hi" };

beforeAll(async () => {
  await putSettings({ pools: { [MODEL]: pool([origin("hb-a")]) } });
});

const post = (path: string, body: string) =>
  call(path, { method: "POST", headers: { "content-type": "application/json" }, body });

async function expectInvalid(res: Response, param: string) {
  const body = (await res.json()) as { error?: Record<string, unknown> };
  expect({ status: res.status, code: body.error?.code, param: body.error?.param }).toEqual({
    status: 400,
    code: "invalid_value",
    param,
  });
  expect(body.error?.type).toBe("invalid_request_error");
  expect(body.error?.message).toMatch(new RegExp(`^${param.replace(/\./g, "\\.")}: `));
  return body.error?.message as string;
}

const tokenIds = (n: number) => Array.from({ length: n }, (_, i) => (i * 7919) % 128_000);
const nested = (depth: number, inner = "") => "[".repeat(depth) + inner + "]".repeat(depth);

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("token-id prompts", () => {
  it("a prompt of 1M token ids is routed and forwarded byte for byte", async () => {
    const body = JSON.stringify({ model: MODEL, prompt: tokenIds(1_000_000) });
    const res = await post("/v1/completions", body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("hb-a");
    expect(res.headers.get("x-test-body-sha256")).toBe(await sha256(body));
    await res.text();
  });

  it("a bad token id among 1M is named by its index, and what a token id is", async () => {
    const ids: unknown[] = tokenIds(1_000_000);
    ids.push(-1);
    const res = await post("/v1/completions", JSON.stringify({ model: MODEL, prompt: ids }));
    expect(await expectInvalid(res, "prompt.1000000")).toContain("token id");
  });

  it("a bad token id in a nested list is named by both indexes", async () => {
    const prompt = [tokenIds(10), [...tokenIds(10), 1.5]];
    const res = await post("/v1/completions", JSON.stringify({ model: MODEL, prompt }));
    await expectInvalid(res, "prompt.1.10");
  });

  it("a prompt that mixes strings and token ids names the first odd one", async () => {
    const res = await post("/v1/completions", JSON.stringify({ model: MODEL, prompt: ["a", 1] }));
    await expectInvalid(res, "prompt.1");
  });
});

describe("the structural budget (docs/api.md)", () => {
  it("deep nesting in tools is a 400 naming tools (was: parsed, then stringified whole)", async () => {
    const body = `{"model":"${MODEL}","messages":[${JSON.stringify(hi)}],"tools":[${nested(100_000)}]}`;
    expect(await expectInvalid(await post("/v1/chat/completions", body), "tools")).toContain(
      "deeper than 128",
    );
  });

  it("deep nesting in a content part is a 400 naming messages (was: stringified whole)", async () => {
    const part = `{"type":"x","x":${nested(100_000)}}`;
    const body = `{"model":"${MODEL}","messages":[{"role":"user","content":[${part}]}]}`;
    await expectInvalid(await post("/v1/chat/completions", body), "messages");
  });

  it("deep nesting in a field the router ignores is refused before it is parsed (was: routed)", async () => {
    const body = `{"model":"${MODEL}","messages":[${JSON.stringify(hi)}],"x":${nested(200_000)}}`;
    await expectInvalid(await post("/v1/chat/completions", body), "x");
  });

  it("nesting up to 128 levels is routed, one more is a 400", async () => {
    // The body is depth 1; tools' array 2; its element 3..128.
    const body = `{"model":"${MODEL}","messages":[${JSON.stringify(hi)}],"tools":[${nested(126)}]}`;
    const res = await post("/v1/chat/completions", body);
    expect(res.status).toBe(200);
    await res.text();
    const deeper = body.replace("[[", "[[[").replace("]]", "]]]");
    await expectInvalid(await post("/v1/chat/completions", deeper), "tools");
  });

  it("more objects and arrays than the budget is a 400 (was: parsed, ~120 ns and ~30 bytes each)", async () => {
    const many = Array(262_144).fill("[]").join(",");
    const body = `{"model":"${MODEL}","messages":[${JSON.stringify(hi)}],"metadata":[${many}]}`;
    expect(await expectInvalid(await post("/v1/chat/completions", body), "metadata")).toContain(
      "objects and arrays",
    );
  });

  it("more object keys than the budget is a 400", async () => {
    const keys = Array.from({ length: 262_145 }, (_, i) => `"k${i}":0`).join(",");
    const body = `{"model":"${MODEL}","prompt":"hi","logit_bias":{${keys}}}`;
    expect(await expectInvalid(await post("/v1/completions", body), "logit_bias")).toContain(
      "object keys",
    );
  });

  it("more strings than the budget is a 400", async () => {
    const prompt = JSON.stringify(Array.from({ length: 524_288 }, (_, i) => `p${i}`));
    const body = `{"model":"${MODEL}","prompt":${prompt}}`;
    expect(await expectInvalid(await post("/v1/completions", body), "prompt")).toContain("strings");
  });

  it("a body that is not an object but too deep is named as the body", async () => {
    const res = await post("/v1/chat/completions", nested(1000));
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(res.status).toBe(400);
    expect(body.error.param).toBeNull();
    expect(body.error.message).toMatch(/^body: nested deeper/);
  });
});

describe("body fields that steer where engines fetch KV (issue 9, item 8's body twin)", () => {
  it.each([
    ["kv_transfer_params", { do_remote_prefill: true, remote_host: "10.0.0.1", remote_port: 5600 }],
    ["bootstrap_host", "10.0.0.1"],
    ["bootstrap_port", 8998],
    ["bootstrap_room", 42],
  ])(
    "a client's %s reached the origin: refused, naming it, and never forwarded",
    async (field, value) => {
      const before = await hits("hb-a");
      const body = JSON.stringify({ model: MODEL, messages: [hi], [field]: value });
      const message = await expectInvalid(await post("/v1/chat/completions", body), field);
      expect(message).toContain("set by the router");
      expect(await hits("hb-a")).toBe(before);
    },
  );
});
