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

const CLIENT_URL = "https://router.test/v1/chat/completions";
/** The forwarding headers the router sets for a request to CLIENT_URL. */
const VIA = { "x-forwarded-proto": "https", "x-forwarded-host": "router.test" };

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
    const out = originHeaders(client, "sk-origin", "req-1", CLIENT_URL);
    expect(Object.fromEntries(out)).toEqual({
      authorization: "Bearer sk-origin",
      "content-type": "application/json",
      "openai-organization": "org",
      "x-request-id": "req-1",
      "x-forwarded-for": "1.2.3.4",
      ...VIA,
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
    expect(Object.fromEntries(originHeaders(client, undefined, "r", CLIENT_URL))).toEqual({
      "x-custom": "kept",
      "x-request-id": "r",
      ...VIA,
    });
  });

  it("drops a client's API key in any of the headers SDKs send it in", () => {
    const client = new Headers({ "x-api-key": "sk-client", "api-key": "sk-client" });
    expect(Object.fromEntries(originHeaders(client, "sk-origin", "r", CLIENT_URL))).toEqual({
      authorization: "Bearer sk-origin",
      "x-request-id": "r",
      ...VIA,
    });
  });

  it("sends no Authorization to an origin without a key", () => {
    const out = originHeaders(
      new Headers({ authorization: "Bearer client" }),
      undefined,
      "r",
      CLIENT_URL,
    );
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
      CLIENT_URL,
    );
    expect(out.has("x-hop")).toBe(false);
    expect(out.has("connection")).toBe(false);
  });

  it("Expect reached the origin, which answered 417: it is dropped", () => {
    const out = originHeaders(new Headers({ expect: "100-continue" }), undefined, "r", CLIENT_URL);
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
        for (const [n, v] of originHeaders(client, undefined, "", CLIENT_URL)) {
          // The forwarding headers are the router's, not the client's: not counted.
          if (!n.startsWith("x-forwarded-")) block += n.length + v.length + 4;
        }
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

describe("client headers the second fuzz found (issue 24)", () => {
  it("x_prefiller_host_port reached the origin, which may read it as x-prefiller-host-port: underscores count as dashes", () => {
    const client = new Headers([
      ["x_prefiller_host_port", "10.0.0.66:8000"],
      ["x_llm_d_pick", "10.0.0.66"],
      ["x_api_key", "sk-client"],
      ["proxy_authorization", "Basic x"],
      ["cf_connecting_ip", "6.6.6.6"],
      ["x_router_session", "s"],
      ["x_forwarded_for", "6.6.6.6"],
      ["x_custom", "kept"],
    ]);
    expect(Object.fromEntries(originHeaders(client, undefined, "r", CLIENT_URL))).toEqual({
      x_custom: "kept",
      "x-request-id": "r",
      ...VIA,
    });
  });

  it("Forwarded, X-Forwarded-* and X-Original-URL passed from the client: the router sets its own from the platform", () => {
    const client = new Headers({
      forwarded: "for=6.6.6.6;host=internal",
      "x-forwarded-for": "6.6.6.6",
      "x-forwarded-host": "internal.example",
      "x-forwarded-proto": "http",
      "x-forwarded-prefix": "/admin",
      "x-original-url": "/admin",
      "x-original-host": "internal.example",
      "x-rewrite-url": "/admin",
      "x-real-ip": "6.6.6.6",
      "true-client-ip": "6.6.6.6",
      "cf-connecting-ip": "2001:db8::7",
    });
    const out = originHeaders(client, undefined, "r", "http://localhost:8787/v1/completions");
    expect(Object.fromEntries(out)).toEqual({
      "x-request-id": "r",
      "x-forwarded-for": "2001:db8::7",
      "x-forwarded-proto": "http",
      "x-forwarded-host": "localhost:8787",
    });
  });

  it("no client address from the platform: no X-Forwarded-For at all, not the client's", () => {
    const client = new Headers({ "x-forwarded-for": "6.6.6.6" });
    expect(originHeaders(client, undefined, "r", CLIENT_URL).has("x-forwarded-for")).toBe(false);
  });
});
