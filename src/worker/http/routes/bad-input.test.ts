import { beforeAll, describe, expect, it } from "vitest";
import { call, chat, origin, pool, putSettings } from "../../test/helpers.ts";

const MODEL = "bad-input-model";

beforeAll(async () => {
  await putSettings({ pools: { [MODEL]: pool([origin("bi-a")], { maxBodyBytes: 4096 }) } });
});

async function expectOpenAiError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.type).toBe("string");
  return body.error;
}

const post = (path: string, body: string) =>
  call(path, { method: "POST", headers: { "content-type": "application/json" }, body });

describe("bad input gets a clean OpenAI-shape error, never a 500", () => {
  it("invalid JSON", async () => {
    await expectOpenAiError(await post("/v1/chat/completions", "{not json"), 400, "invalid_json");
  });

  it("a JSON value that is not an object", async () => {
    await expectOpenAiError(await post("/v1/chat/completions", "[1,2]"), 400, "invalid_json");
  });

  it("missing model", async () => {
    const res = await post(
      "/v1/chat/completions",
      JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    );
    const error = await expectOpenAiError(res, 400, "missing_required_parameter");
    expect(error.param).toBe("model");
  });

  it("wrong types", async () => {
    const res = await post("/v1/chat/completions", JSON.stringify({ model: 42, messages: "hi" }));
    const error = await expectOpenAiError(res, 400, "invalid_value");
    expect(error.param).toBe("model");
    const res2 = await post("/v1/completions", JSON.stringify({ model: MODEL, prompt: { a: 1 } }));
    expect((await expectOpenAiError(res2, 400, "invalid_value")).param).toBe("prompt");
  });

  it("empty messages", async () => {
    const res = await chat(MODEL, []);
    const error = await expectOpenAiError(res, 400, "invalid_value");
    expect(error.param).toBe("messages");
  });

  it("body over the limit is 413, by Content-Length and by streamed length", async () => {
    const big = JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: "x".repeat(5000) }],
    });
    await expectOpenAiError(await post("/v1/chat/completions", big), 413, "request_too_large");
    const streamed = new Blob([big]).stream();
    const res = await call("/v1/chat/completions", {
      method: "POST",
      body: streamed,
      // @ts-expect-error: workerd's RequestInit accepts duplex for streamed bodies.
      duplex: "half",
    });
    await expectOpenAiError(res, 413, "request_too_large");
  });

  it("unknown model is 404 model_not_found", async () => {
    const error = await expectOpenAiError(
      await chat("no-such-model", [{ role: "user", content: "hi" }]),
      404,
      "model_not_found",
    );
    expect(error.type).toBe("invalid_request_error");
  });

  it("unknown route is a 404 in the same shape", async () => {
    await expectOpenAiError(await call("/v2/nothing"), 404, "not_found");
  });

  it("a valid request in the same pool still works", async () => {
    const res = await chat(MODEL, [{ role: "user", content: "hi" }]);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("bi-a");
    await res.text();
  });
});
