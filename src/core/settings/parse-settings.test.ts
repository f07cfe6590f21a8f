import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { POLICY_TYPES } from "../policies/index.ts";
import { MODEL_NAME_MAX_BYTES } from "./model-name.ts";
import { parsePool, parseSettings } from "./parse-settings.ts";

const origin = { id: "gpu-a", url: "http://10.0.0.1:8000" };
const doc = (pool: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  pools: { llama: { origins: [origin], ...pool } },
  ...extra,
});

describe("parseSettings", () => {
  it("fills every default from a minimal document", () => {
    const result = parseSettings(doc({}));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const pool = result.value.pools.llama;
    expect(pool?.policy).toEqual({
      type: "cost",
      affinityPrice: 3,
      loadAffinity: 1,
      hotHeat: 4,
      decodeWeight: 0.05,
    });
    expect(pool?.chunkBytes).toBe(256);
    expect(pool?.routeTimeoutMs).toBe(1000);
    expect(pool?.retry).toEqual({ maxAttempts: 3, backoffMs: 50, backoffMultiplier: 1.5 });
    expect(pool?.maxBodyBytes).toBe(16 * 1024 * 1024);
    expect(pool?.indexFeed).toBe("router");
    expect(pool?.coordination).toBe("object");
    expect(pool?.edge).toMatchObject({ flushRecords: 256, coordinators: 1, chunkStride: 8 });
    expect(pool?.origins[0]).toEqual({ ...origin, role: "both", weight: 1 });
  });

  it("accepts every policy type with its defaults", () => {
    for (const type of POLICY_TYPES) {
      const result = parseSettings(doc({ policy: { type } }));
      expect(result.ok, type).toBe(true);
    }
  });

  // Each row: a document with one bad field, and the field the error must name.
  const invalid: [string, unknown, string][] = [
    ["version", { ...doc({}), version: 2 }, "version"],
    ["unknown top-level field", doc({}, { colour: "red" }), "colour"],
    ["pools not an object", { pools: [] }, "pools"],
    ["empty model name", { pools: { "": { origins: [origin] } } }, 'pools[""]'],
    ["no origins", doc({ origins: [] }), "pools.llama.origins"],
    ["origin id", doc({ origins: [{ ...origin, id: "bad id!" }] }), "pools.llama.origins[0].id"],
    ["duplicate origin id", doc({ origins: [origin, { ...origin }] }), "pools.llama.origins[1].id"],
    [
      "origin url scheme",
      doc({ origins: [{ ...origin, url: "ftp://x" }] }),
      "pools.llama.origins[0].url",
    ],
    [
      "origin url garbage",
      doc({ origins: [{ ...origin, url: "not a url" }] }),
      "pools.llama.origins[0].url",
    ],
    [
      "origin secret name",
      doc({ origins: [{ ...origin, apiKeySecret: "sk-live-123" }] }),
      "pools.llama.origins[0].apiKeySecret",
    ],
    [
      "origin kv capacity",
      doc({ origins: [{ ...origin, kvCapacityTokens: 0 }] }),
      "pools.llama.origins[0].kvCapacityTokens",
    ],
    [
      "origin prefill speed",
      doc({ origins: [{ ...origin, prefillTokensPerSecond: -5 }] }),
      "pools.llama.origins[0].prefillTokensPerSecond",
    ],
    [
      "origin role",
      doc({ origins: [{ ...origin, role: "both-ways" }] }),
      "pools.llama.origins[0].role",
    ],
    [
      "origin weight",
      doc({ origins: [{ ...origin, weight: 0 }] }),
      "pools.llama.origins[0].weight",
    ],
    [
      "origin unknown field",
      doc({ origins: [{ ...origin, apiKey: "secret" }] }),
      "pools.llama.origins[0].apiKey",
    ],
    ["policy type", doc({ policy: { type: "fastest" } }), "pools.llama.policy.type"],
    ["coordination mode", doc({ coordination: "gossip" }), "pools.llama.coordination"],
    ["edge flush interval", doc({ edge: { flushMs: 0 } }), "pools.llama.edge.flushMs"],
    ["edge unknown field", doc({ edge: { flushEvery: 3 } }), "pools.llama.edge.flushEvery"],
    [
      "edge with engine-fed index",
      doc({ coordination: "edge", indexFeed: "engine-events" }),
      "pools.llama.indexFeed",
    ],
    [
      "policy parameter type",
      doc({ policy: { type: "cost", affinityPrice: "high" } }),
      "pools.llama.policy.affinityPrice",
    ],
    [
      "policy parameter range",
      doc({ policy: { type: "cache-aware", cacheThreshold: 2 } }),
      "pools.llama.policy.cacheThreshold",
    ],
    [
      "policy unknown parameter",
      doc({ policy: { type: "hybrid", threshold: 3 } }),
      "pools.llama.policy.threshold",
    ],
    [
      "bounded load below 1",
      doc({ policy: { type: "prefix-hash", boundedLoad: 0.5 } }),
      "pools.llama.policy.boundedLoad",
    ],
    ["chunk size multiple", doc({ chunkBytes: 100 }), "pools.llama.chunkBytes"],
    ["chunk size range", doc({ chunkBytes: 16 }), "pools.llama.chunkBytes"],
    [
      "pool prefill speed",
      doc({ prefillTokensPerSecond: 0 }),
      "pools.llama.prefillTokensPerSecond",
    ],
    ["pool kv capacity", doc({ kvCapacityTokens: 1.5 }), "pools.llama.kvCapacityTokens"],
    ["route timeout", doc({ routeTimeoutMs: 0 }), "pools.llama.routeTimeoutMs"],
    ["first byte timeout", doc({ firstByteTimeoutMs: "60s" }), "pools.llama.firstByteTimeoutMs"],
    ["retry attempts", doc({ retry: { maxAttempts: 0 } }), "pools.llama.retry.maxAttempts"],
    ["retry backoff", doc({ retry: { backoffMs: -1 } }), "pools.llama.retry.backoffMs"],
    [
      "retry multiplier",
      doc({ retry: { backoffMultiplier: 0.5 } }),
      "pools.llama.retry.backoffMultiplier",
    ],
    [
      "circuit threshold",
      doc({ circuit: { failureThreshold: 0 } }),
      "pools.llama.circuit.failureThreshold",
    ],
    ["circuit cooldown", doc({ circuit: { cooldownMs: 1 } }), "pools.llama.circuit.cooldownMs"],
    ["lease", doc({ leaseMs: 10 }), "pools.llama.leaseMs"],
    ["report fresh", doc({ reportFreshMs: 0 }), "pools.llama.reportFreshMs"],
    [
      "report stale before fresh",
      doc({ reportFreshMs: 5000, reportStaleMs: 1000 }),
      "pools.llama.reportStaleMs",
    ],
    ["body limit", doc({ maxBodyBytes: 10 }), "pools.llama.maxBodyBytes"],
    ["index budget", doc({ indexMaxChunks: 5 }), "pools.llama.indexMaxChunks"],
    ["index feed", doc({ indexFeed: "kv-events" }), "pools.llama.indexFeed"],
    ["location hint", doc({ locationHint: "mars" }), "pools.llama.locationHint"],
    ["unknown pool field", doc({ policyName: "cost" }), "pools.llama.policyName"],
  ];

  it.each(invalid)("rejects %s, naming the field", (_name, input, field) => {
    const result = parseSettings(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field)).toContain(field);
    for (const e of result.errors) expect(e.reason.length).toBeGreaterThan(3);
  });

  it("brackets model names that are not identifiers", () => {
    const result = parseSettings({
      pools: { "meta/llama-3.1": { origins: [{ id: "a", url: "x" }] } },
    });
    expect(!result.ok && result.errors[0]?.field).toBe('pools["meta/llama-3.1"].origins[0].url');
  });

  it("reports every bad field at once, with the value found", () => {
    const result = parseSettings(
      doc({ chunkBytes: 100, origins: [{ ...origin, weight: -1, url: "ftp://x" }] }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byField = Object.fromEntries(result.errors.map((e) => [e.field, e]));
    expect(byField["pools.llama.chunkBytes"]?.value).toBe("100");
    expect(byField["pools.llama.origins[0].weight"]?.value).toBe("-1");
    expect(byField["pools.llama.origins[0].url"]?.value).toBe('"ftp://x"');
  });

  it("parsePool throws with every field named", () => {
    expect(() => parsePool({ origins: [{ id: "a", url: "x" }], chunkBytes: 7 } as never)).toThrow(
      /origins\[0\]\.url.*chunkBytes|chunkBytes.*origins\[0\]\.url/,
    );
  });
});

describe("parseSettings: issue 9 defects", () => {
  // Every name the Worker binds itself (wrangler.toml, src/worker/http/middleware/app-env.ts).
  const routerBindings = [
    "ADMIN_TOKEN",
    "WEBHOOK_SECRET",
    "METRICS_TOKEN",
    "SETTINGS_CACHE_MS",
    "SETTINGS",
    "ROUTER",
  ];

  it.each(routerBindings)(
    "apiKeySecret naming the router's own %s was accepted (the origin got Bearer <it>)",
    (name) => {
      const result = parseSettings(doc({ origins: [{ ...origin, apiKeySecret: name }] }));
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors).toEqual([
        {
          field: "pools.llama.origins[0].apiKeySecret",
          value: JSON.stringify(name),
          reason: expect.stringMatching(/router's own/),
        },
      ]);
    },
  );

  it("an origin key secret of its own is still accepted", () => {
    expect(parseSettings(doc({ origins: [{ ...origin, apiKeySecret: "GPU_A_KEY" }] })).ok).toBe(
      true,
    );
  });

  // JSON.parse makes "__proto__" an own key, as a document from KV or the admin API would.
  it.each(["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"])(
    "a pool named %s was accepted and silently dropped",
    (name) => {
      const input = JSON.parse(
        `{"pools":{${JSON.stringify(name)}:{"origins":[{"id":"a","url":"http://x"}]}}}`,
      );
      const result = parseSettings(input);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors.map((e) => e.field)).toEqual([`pools.${name}`]);
      expect(result.errors[0]?.reason).toMatch(/reserved/);
    },
  );

  it.each(["constructor", "toString", "hasOwnProperty", "valueOf"])(
    "an origin id %s would read Object.prototype wherever ids key a JSON object",
    (id) => {
      const result = parseSettings(doc({ origins: [{ ...origin, id }] }));
      expect(!result.ok && result.errors.map((e) => e.field)).toEqual([
        "pools.llama.origins[0].id",
      ]);
    },
  );

  it("an empty pool map is a valid document", () => {
    expect(parseSettings({ pools: {} })).toEqual({ ok: true, value: { version: 1, pools: {} } });
  });
});

describe("parseSettings: issue 10 defects", () => {
  // Refused by name while disaggregated serving was not built; now a role needs its pd block.
  it.each(["prefill", "decode"])(
    "an origin role %s was accepted and ignored: without its pd block it is refused",
    (role) => {
      const result = parseSettings(doc({ origins: [{ ...origin, role }] }));
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors).toContainEqual({
        field: "pools.llama.origins[0].pd",
        reason: `required for role ${role}`,
      });
    },
  );

  it("role both, the default, is still accepted", () => {
    expect(parseSettings(doc({ origins: [{ ...origin, role: "both" }] })).ok).toBe(true);
  });
});

describe("parseSettings: issue 24 defects (pool names storage cannot hold)", () => {
  const named = (name: string) => ({ pools: { [name]: { origins: [origin] } } });
  const fieldOf = (name: string) => `pools[${JSON.stringify(name)}]`;

  it.each([
    ["164 x € (492 bytes: its key marker is 513)", "€".repeat(164), /at most 491 bytes.*not 492/],
    ["a lone high surrogate", "llama\ud800", /well-formed/],
    ["a lone low surrogate", "\udc00llama", /well-formed/],
  ])(
    "a pool named with %s was accepted, then every request 503 keys_unavailable",
    (_, name, reason) => {
      const result = parseSettings(named(name));
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors.map((e) => e.field)).toEqual([fieldOf(name)]);
      expect(result.errors[0]?.reason).toMatch(reason);
    },
  );

  it("names at exactly the limit are accepted: 491 bytes, and surrogate pairs", () => {
    expect(MODEL_NAME_MAX_BYTES).toBe(512 - "client-keys:enforced:".length);
    // 163 x € (489 bytes) + 2 ASCII = 491 bytes; one more byte is refused.
    const atLimit = `${"€".repeat(163)}ab`;
    expect(parseSettings(named(atLimit)).ok).toBe(true);
    expect(parseSettings(named(`${atLimit}c`)).ok).toBe(false);
    // 😀 is a pair of surrogates and 4 bytes: 122 of them are 488 bytes, 123 are 492.
    expect(parseSettings(named("😀".repeat(122))).ok).toBe(true);
    expect(parseSettings(named("😀".repeat(123))).ok).toBe(false);
  });

  it("accepts a name iff it is well-formed, 1-256 code points and at most 491 UTF-8 bytes", () => {
    const unit = fc.constantFrom("a", "é", "€", "😀", "\ud800", "\udfff", "\u0000", "/");
    fc.assert(
      fc.property(fc.array(unit, { minLength: 1, maxLength: 300 }), (parts) => {
        const name = parts.join("");
        const wellFormed = !/\p{Cs}/u.test(name);
        const bytes = new TextEncoder().encode(name).byteLength;
        const storable = wellFormed && [...name].length <= 256 && bytes <= MODEL_NAME_MAX_BYTES;
        expect(parseSettings(named(name)).ok).toBe(storable);
      }),
    );
  });
});
