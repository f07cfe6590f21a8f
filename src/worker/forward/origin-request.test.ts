import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkForwardedHeaders,
  clientHeaders,
  MAX_FORWARDED_HEADER_BYTES,
  originHeaders,
  originUrl,
} from "./origin-request.ts";

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

  it("drops client headers that steer disaggregated serving or name an upstream (SSRF into the GPU network)", () => {
    const steering = [
      "x-prefiller-host-port",
      "x-prefiller-url",
      "x-encoder-hosts-ports",
      "x-data-parallel-host-port",
      "x-kv-cache-source-host-port",
      "x-llm-d-prefiller-host-port",
      "x-llm-d-anything-new",
      "x-gateway-destination-endpoint",
      "x-gateway-destination-endpoint-subset",
      "x-worker-instance-id",
      "x-prefill-instance-id",
      "x-dp-rank",
      "x-data-parallel-rank",
      "x-prefill-dp-rank",
      "x-dynamo-routing-mode",
      "x-epp-inject-nvext-token-data",
      "x-smg-routing-key",
      "X-SMG-Target-Worker",
      "target-pod",
      "routing-strategy",
      "x-envoy-original-dst-host",
    ];
    const client = new Headers(steering.map((name) => [name, "10.0.0.66:8000"]));
    client.set("x-custom", "kept");
    expect(Object.fromEntries(originHeaders(client, undefined, "r"))).toEqual({
      "x-custom": "kept",
      "x-request-id": "r",
    });
  });

  it("drops a client's API key in any of the headers SDKs send it in", () => {
    const client = new Headers({ "x-api-key": "sk-client", "api-key": "sk-client" });
    expect(Object.fromEntries(originHeaders(client, "sk-origin", "r"))).toEqual({
      authorization: "Bearer sk-origin",
      "x-request-id": "r",
    });
  });

  it("sends no Authorization to an origin without a key", () => {
    const out = originHeaders(new Headers({ authorization: "Bearer client" }), undefined, "r");
    expect(out.has("authorization")).toBe(false);
  });
});

describe("clientHeaders", () => {
  it("drops hop-by-hop headers, Set-Cookie, Content-Length and Location; keeps the rest", () => {
    const origin = new Headers({
      "content-type": "text/event-stream",
      "content-length": "10",
      "set-cookie": "lb=1",
      connection: "close",
      "x-engine": "vllm",
      location: "http://10.0.0.9:8000/internal",
    });
    expect(Object.fromEntries(clientHeaders(origin))).toEqual({
      "content-type": "text/event-stream",
      "x-engine": "vllm",
    });
  });
});

describe("client headers the fuzz found (issue 9)", () => {
  it("a Connection item that is no header name was a 500: it names nothing and is ignored", () => {
    const out = originHeaders(
      new Headers({ connection: "a b, x-hop, (x)", "x-hop": "1" }),
      undefined,
      "r",
    );
    expect(out.has("x-hop")).toBe(false);
    expect(out.has("connection")).toBe(false);
  });

  it("Expect reached the origin, which answered 417: it is dropped", () => {
    const out = originHeaders(new Headers({ expect: "100-continue" }), undefined, "r");
    expect(out.has("expect")).toBe(false);
  });

  it("client headers past what origins accept are a 431, counted as forwarded", () => {
    const big = "x".repeat(MAX_FORWARDED_HEADER_BYTES);
    expect(() => checkForwardedHeaders(new Headers({ "x-big": big }))).toThrow(
      expect.objectContaining({ status: 431, code: "request_header_fields_too_large" }),
    );
    // A dropped header (the client's own credentials) is not forwarded, so it does not count.
    expect(() => checkForwardedHeaders(new Headers({ authorization: big }))).not.toThrow();
  });

  it("the 431 counts exactly the block originHeaders forwards, without copying it", () => {
    const name = fc.constantFrom(
      "x-custom",
      "x-request-id",
      "authorization",
      "connection",
      "keep-alive",
      "x-listed",
      "cf-ray",
      "x-router-session",
      "x-llm-d-pick",
      "content-type",
    );
    const value = fc.constantFrom("x-listed, keep-alive", "v", "x".repeat(3000), "");
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 8 }), (entries) => {
        const client = new Headers(entries);
        let block = 0;
        for (const [n, v] of originHeaders(client, undefined, "")) block += n.length + v.length + 4;
        const over = (() => {
          try {
            checkForwardedHeaders(client);
            return false;
          } catch {
            return true;
          }
        })();
        expect(over).toBe(block > MAX_FORWARDED_HEADER_BYTES);
      }),
    );
  });
});
