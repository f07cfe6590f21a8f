import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { engineHost, prefillerHostPort } from "./engine-address.ts";
import {
  NIXL_PREFILL_PARAMS,
  nixlPrefillBody,
  sglangPrefillBody,
  withFields,
} from "./leg-bodies.ts";

const encode = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer;
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("leg bodies", () => {
  it("appends fields to the client's bytes, keeping every byte it sent", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue(), { minKeys: 1 }),
        fc.constantFrom("", " ", "\n", "\r\n\t "),
        fc.constantFrom(0, 2),
        (object, trailing, indent) => {
          const text = JSON.stringify(object, null, indent) + trailing;
          const fields = { bootstrap_room: 42, kv_transfer_params: { remote_host: "h" } };
          const out = decode(withFields(encode(text), fields));
          const end = text.lastIndexOf("}");
          expect(out.startsWith(text.slice(0, end))).toBe(true);
          expect(out.endsWith(text.slice(end))).toBe(true);
          expect(JSON.parse(out)).toEqual({ ...JSON.parse(text), ...fields });
        },
      ),
    );
  });

  it("keeps bytes JSON.parse would change: big integers, escapes, duplicate keys", () => {
    const text = '{"model":"m","seed":12345678901234567891,"x":"\\u00e9","x":1}';
    const out = decode(withFields(encode(text), { bootstrap_room: 1 }));
    expect(out).toBe(
      '{"model":"m","seed":12345678901234567891,"x":"\\u00e9","x":1,"bootstrap_room":1}',
    );
  });

  it("builds vLLM's prefill leg as its toy proxy does", () => {
    const client = {
      model: "m",
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      min_tokens: 5,
      min_completion_tokens: 5,
    };
    expect(JSON.parse(nixlPrefillBody(client))).toEqual({
      model: "m",
      messages: [],
      stream: false,
      max_tokens: 1,
      kv_transfer_params: NIXL_PREFILL_PARAMS,
    });
    expect(JSON.parse(nixlPrefillBody({ model: "m", max_completion_tokens: 9 }))).toMatchObject({
      max_completion_tokens: 1,
      max_tokens: 1,
    });
  });

  it("builds SGLang's prefill leg: the bootstrap fields, answered as JSON", () => {
    const bootstrap = { bootstrap_host: "h", bootstrap_port: 1, bootstrap_room: 2 };
    const body = {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 9,
    };
    expect(JSON.parse(sglangPrefillBody(body, bootstrap))).toEqual({
      model: "m",
      stream: false,
      max_tokens: 9,
      ...bootstrap,
    });
  });
});

describe("engine addresses", () => {
  const origin = (url: string, engineHost?: string) =>
    ({ id: "p", url, pd: { protocol: "vllm-nixl", engineHost } }) as OriginSettings;

  it("is the engineHost, else the URL's host, IPv6 unbracketed", () => {
    expect(engineHost(origin("https://p.example.com/v1", "10.0.0.5"))).toBe("10.0.0.5");
    expect(engineHost(origin("http://[fd00::5]:8000"))).toBe("fd00::5");
    expect(engineHost(origin("http://p.internal:8000", "[fd00::7]"))).toBe("fd00::7");
  });

  it("names llm-d's prefiller with a port: the engineHost's, else the URL's or its scheme's", () => {
    expect(prefillerHostPort(origin("https://p.example.com", "10.0.0.5:8200"))).toBe(
      "10.0.0.5:8200",
    );
    expect(prefillerHostPort(origin("http://p.internal:8000", "10.0.0.5"))).toBe("10.0.0.5:8000");
    expect(prefillerHostPort(origin("https://p.example.com"))).toBe("p.example.com:443");
    expect(prefillerHostPort(origin("http://[fd00::5]:8000", "[fd00::6]"))).toBe("[fd00::6]:8000");
    expect(prefillerHostPort(origin("http://[fd00::5]:8000", "[fd00::6]:9"))).toBe("[fd00::6]:9");
  });
});
