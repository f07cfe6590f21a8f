import { describe, expect, it } from "vitest";
import { clientHeaders, originHeaders, originUrl } from "./origin-request.ts";

describe("originUrl", () => {
  it.each([
    ["https://gpu.example.com", "https://gpu.example.com/v1/chat/completions"],
    ["https://gpu.example.com/", "https://gpu.example.com/v1/chat/completions"],
    ["https://gpu.example.com/v1", "https://gpu.example.com/v1/chat/completions"],
    ["https://gpu.example.com/v1/", "https://gpu.example.com/v1/chat/completions"],
    ["http://10.0.0.5:8000/tenant-a", "http://10.0.0.5:8000/tenant-a/v1/chat/completions"],
  ])("%s", (base, url) => {
    expect(originUrl(base, "/v1/chat/completions")).toBe(url);
  });
});

describe("originHeaders", () => {
  it("drops client credentials, hop-by-hop, cf- and x-router- headers; sets the origin key", () => {
    const client = new Headers({
      authorization: "Bearer client",
      "proxy-authorization": "Basic x",
      cookie: "a=b",
      connection: "keep-alive, x-private",
      "x-private": "1",
      "keep-alive": "timeout=5",
      upgrade: "h2c",
      te: "trailers",
      "cf-connecting-ip": "1.2.3.4",
      "x-router-session": "s",
      "content-type": "application/json",
      "openai-organization": "org",
    });
    const out = originHeaders(client, "sk-origin", "req-1");
    expect(Object.fromEntries(out)).toEqual({
      authorization: "Bearer sk-origin",
      "content-type": "application/json",
      "openai-organization": "org",
      "x-request-id": "req-1",
    });
  });

  it("sends no Authorization to an origin without a key", () => {
    const out = originHeaders(new Headers({ authorization: "Bearer client" }), undefined, "r");
    expect(out.has("authorization")).toBe(false);
  });
});

describe("clientHeaders", () => {
  it("drops hop-by-hop headers, Set-Cookie and Content-Length; keeps the rest", () => {
    const origin = new Headers({
      "content-type": "text/event-stream",
      "content-length": "10",
      "set-cookie": "lb=1",
      connection: "close",
      "x-engine": "vllm",
    });
    expect(Object.fromEntries(clientHeaders(origin))).toEqual({
      "content-type": "text/event-stream",
      "x-engine": "vllm",
    });
  });
});
