import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FastOrigin, startFastOrigin } from "./fast-origin.ts";

let origin: FastOrigin;
beforeAll(async () => {
  origin = await startFastOrigin();
});
afterAll(() => origin.close());

const post = (path: string, body: unknown) =>
  fetch(`${origin.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("fast origin", () => {
  it("answers a chat completion at once, with usage and cached tokens", async () => {
    const res = await post("/v1/chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "x".repeat(400) }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      object: string;
      model: string;
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    };
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("m");
    expect(body.choices[0]?.message.content).toBe("ok");
    expect(body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(body.usage.prompt_tokens_details.cached_tokens).toBeLessThan(body.usage.prompt_tokens);
  });

  it("streams SSE ending with a usage chunk and [DONE]", async () => {
    const res = await post("/v1/completions", { model: "m", prompt: "hi", stream: true });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const events = (await res.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse((events.at(-2) as string).slice(6)).usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("400 for a body that is not JSON, 404 elsewhere", async () => {
    const bad = await fetch(`${origin.url}/v1/chat/completions`, { method: "POST", body: "{" });
    expect(bad.status).toBe(400);
    expect((await fetch(`${origin.url}/v1/embeddings`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${origin.url}/health`)).status).toBe(200);
  });
});
