/**
 * Client keys and their limits through the Worker's real entry point (docs/api.md, "Client
 * keys"). A pool needs a key once a key names it, every pool once a key names `*`, and
 * never again not: so the open router is tested first, then one pool with a key, then every
 * pool; the file's KV (isolated per test file) keeps what each step made.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { promptKey } from "../../core/prompt/prompt-key.ts";
import type { RequestLogLine } from "../request-record/request-record.ts";
import {
  admin,
  call,
  chat,
  hits,
  origin,
  pool,
  putSettings,
  received,
  waitFor,
} from "../test/helpers.ts";

const MODEL = "keys-model";
const OTHER = "keys-other-model";
/** SETTINGS_CACHE_MS in the tests (vitest.config.ts): how long this isolate trusts what it read. */
const CACHE_MS = 200;

interface OpenAiError {
  error: { message: string; type: string; code: string; param: string | null };
}

interface CreatedKey {
  id: string;
  key: string;
  name: string;
  models: string[];
  priority: string;
  limits: { requestsPerMinute: number | null; promptTokensPerMinute: number | null };
  createdAt: number;
}

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool([origin("ck-a", "ok", { apiKeySecret: "TEST_ORIGIN_KEY" })]),
      [OTHER]: pool([origin("ck-b")]),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function createKey(body: Record<string, unknown>): Promise<CreatedKey> {
  const res = await admin("/admin/keys", { method: "POST", body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as CreatedKey;
}

const hi = [{ role: "user", content: "hi" }];
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function error(res: Response): Promise<[number, OpenAiError["error"]]> {
  return [res.status, ((await res.json()) as OpenAiError).error];
}

describe("with no key created, the router is open as before", () => {
  it("requests without a key, or with any Authorization, are routed; the header stays at the edge", async () => {
    const before = await hits("ck-b");
    const open = await chat(OTHER, hi);
    expect(open.status).toBe(200);
    await open.text();
    const any = await chat(OTHER, hi, { headers: bearer("whatever-the-client-sends") });
    expect(any.status).toBe(200);
    await any.text();
    expect(await hits("ck-b")).toBe(before + 2);
    const seen = await received("ck-b");
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
    expect((await call("/v1/models")).status).toBe(200);
  });
});

describe("admin API for keys", () => {
  it("invalid input: 400 naming the field, and nothing is stored", async () => {
    const cases: [unknown, string, string, RegExp][] = [
      [{ models: [MODEL] }, "name", "missing_required_parameter", /name/],
      [{ name: "x", models: [] }, "models", "invalid_value", /models/],
      [{ name: "x", models: [MODEL], priority: "urgent" }, "priority", "invalid_value", /priority/],
      [
        { name: "x", models: [MODEL], limits: { requestsPerMinute: 100 } },
        "limits.requestsPerMinute",
        "invalid_value",
        /5, 60, 600, 6000/,
      ],
      [
        { name: "x", models: [MODEL], limits: { promptTokensPerMinute: 1.5 } },
        "limits.promptTokensPerMinute",
        "invalid_value",
        /promptTokensPerMinute/,
      ],
      [{ name: "x", models: [MODEL], typo: 1 }, "typo", "invalid_value", /unknown field/],
      [{ name: "x", models: [MODEL, 7] }, "models[1]", "invalid_value", /models\[1\]/],
    ];
    for (const [body, param, code, message] of cases) {
      const res = await admin("/admin/keys", { method: "POST", body: JSON.stringify(body) });
      const [status, e] = await error(res);
      expect([status, e.type, e.code, e.param], JSON.stringify(body)).toEqual([
        400,
        "invalid_request_error",
        code,
        param,
      ]);
      expect(e.message).toMatch(message);
    }
    const notJson = await admin("/admin/keys", { method: "POST", body: "{" });
    expect((await error(notJson))[1].code).toBe("invalid_json");
    expect((await env.SETTINGS.list({ prefix: "client-key" })).keys).toEqual([]);
    // Still open: no key was made.
    const res = await chat(OTHER, hi);
    expect(res.status).toBe(200);
    await res.text();
  });

  it("a key for a model storage cannot name answered 500 and stored an orphan: now a 400 first", async () => {
    // 164 x € is 492 bytes: its marker `client-keys:enforced:<model>` would be 513, over KV's 512.
    for (const [model, reason] of [
      ["€".repeat(164), /at most 491 bytes in UTF-8, not 492/],
      ["keys-\ud800", /well-formed/],
    ] as const) {
      const body = { name: "x", models: [MODEL, model] };
      const [status, e] = await error(
        await admin("/admin/keys", { method: "POST", body: JSON.stringify(body) }),
      );
      expect([status, e.code, e.param]).toEqual([400, "invalid_value", "models[1]"]);
      expect(e.message).toMatch(reason);
    }
    expect((await env.SETTINGS.list({ prefix: "client-key" })).keys).toEqual([]);
    const settings = await admin("/admin/settings", {
      method: "PUT",
      body: JSON.stringify({ pools: { ["€".repeat(164)]: pool([origin("ck-a")]) } }),
    });
    const [status, e] = await error(settings);
    expect([status, e.code]).toEqual([400, "invalid_settings"]);
    expect(e.message).toMatch(/^pools\["€+"\]: .*at most 491 bytes/);
  });

  it("needs the admin token", async () => {
    for (const init of [{}, { method: "POST", body: "{}" }]) {
      const res = await call("/admin/keys", { ...init, headers: bearer("not-the-admin-token") });
      expect(res.status).toBe(401);
    }
    expect((await call("/admin/keys/0123456789abcdef", { method: "DELETE" })).status).toBe(401);
  });

  it("create shows the key once, stores only its SHA-256; list omits it; delete revokes", async () => {
    const res = await admin("/admin/keys", {
      method: "POST",
      body: JSON.stringify({
        name: "team a",
        models: [MODEL],
        priority: "batch",
        limits: { requestsPerMinute: 600, promptTokensPerMinute: 100000 },
      }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const created = (await res.json()) as CreatedKey;
    expect(created).toMatchObject({
      name: "team a",
      models: [MODEL],
      priority: "batch",
      limits: { requestsPerMinute: 600, promptTokensPerMinute: 100000 },
    });
    expect(created.id).toMatch(/^[0-9a-f]{16}$/);
    expect(created.key).toMatch(new RegExp(`^sk-router-${created.id}_[A-Za-z0-9_-]{43}$`));
    expect(created).not.toHaveProperty("hash");

    // KV holds the hash, never the key.
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(created.key));
    const hash = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(
      "",
    );
    const stored = (await env.SETTINGS.list()).keys.map((k) => k.name);
    expect(stored).toContain(`client-key:${created.id}`);
    for (const name of stored) expect(await env.SETTINGS.get(name)).not.toContain(created.key);
    expect(await env.SETTINGS.get(`client-key:${created.id}`, "json")).toMatchObject({ hash });

    const listed = await admin("/admin/keys");
    const text = await listed.text();
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(hash);
    const page = JSON.parse(text) as { keys: Omit<CreatedKey, "key">[]; cursor: string | null };
    expect(page.cursor).toBeNull();
    const { key: _shown, ...view } = created;
    expect(page.keys).toContainEqual(view);

    const ok = await chat(MODEL, hi, { headers: bearer(created.key) });
    expect(ok.status).toBe(200);
    await ok.text();

    const revoked = await admin(`/admin/keys/${created.id}`, { method: "DELETE" });
    expect(await revoked.json()).toEqual({ id: created.id, revoked: true });
    const again = await chat(MODEL, hi, { headers: bearer(created.key) });
    expect(await error(again)).toEqual([
      401,
      expect.objectContaining({ type: "invalid_request_error", code: "invalid_api_key" }),
    ]);
    const after = (await (await admin("/admin/keys")).json()) as { keys: { id: string }[] };
    expect(after.keys.map((k) => k.id)).not.toContain(created.id);
    expect(await error(await admin(`/admin/keys/${created.id}`, { method: "DELETE" }))).toEqual([
      404,
      expect.objectContaining({ code: "key_not_found", param: "id" }),
    ]);
    expect(
      (await error(await admin("/admin/keys/not-an-id", { method: "DELETE" })))[1],
    ).toMatchObject({ code: "invalid_value", param: "id" });
  });
});
describe("once a key names a pool, that pool needs a key", () => {
  let key: CreatedKey;
  beforeAll(async () => {
    key = await createKey({ name: "main", models: [MODEL] });
  });

  it("a missing or wrong key: 401 invalid_api_key in OpenAI's shape, nothing routed", async () => {
    const before = await hits("ck-a");
    const wrongSecret = `${key.key.slice(0, -4)}AAAA`;
    const unknownId = `sk-router-0000000000000000_${key.key.slice(-43)}`;
    for (const headers of [
      {} as Record<string, string>,
      bearer(""),
      { authorization: key.key },
      bearer(wrongSecret),
      bearer(unknownId),
      bearer("sk-router-garbage"),
      { "x-api-key": key.key },
    ]) {
      const res = await chat(MODEL, hi, { headers });
      const [status, e] = await error(res);
      expect([status, e.type, e.code, e.param], JSON.stringify(headers)).toEqual([
        401,
        "invalid_request_error",
        "invalid_api_key",
        null,
      ]);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(e.message).not.toContain(key.key.slice(-43, -4));
    }
    expect(await hits("ck-a")).toBe(before);
  });

  it("a model no pool serves is a 404 model_not_found, with or without a key", async () => {
    for (const headers of [{}, bearer(key.key)]) {
      const res = await chat("keys-no-such-model", hi, { headers });
      expect((await error(res))[1].code).toBe("model_not_found");
    }
  });

  it("a pool no key names stays open, whatever Authorization says; the models list shows it", async () => {
    const before = await hits("ck-b");
    for (const headers of [{}, bearer("EMPTY"), bearer(key.key)]) {
      const res = await chat(OTHER, hi, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      await res.text();
    }
    expect(await hits("ck-b")).toBe(before + 3);
    const listed = async (headers: Record<string, string>) =>
      ((await (await call("/v1/models", { headers })).json()) as { data: { id: string }[] }).data
        .map((m) => m.id)
        .sort();
    expect(await listed({})).toEqual([OTHER]);
    expect(await listed(bearer("sk-router-garbage"))).toEqual([OTHER]);
    expect(await listed(bearer(key.key))).toEqual([MODEL, OTHER].sort());
  });

  it("the client's key never reaches an origin: it gets its own key, or none", async () => {
    const withSecret = await chat(MODEL, [{ role: "user", content: "to ck-a" }], {
      headers: bearer(key.key),
    });
    expect(withSecret.status).toBe(200);
    await withSecret.text();
    const all = await createKey({ name: "both pools", models: [MODEL, OTHER] });
    const withoutSecret = await chat(OTHER, [{ role: "user", content: "to ck-b" }], {
      headers: bearer(all.key),
    });
    expect(withoutSecret.status).toBe(200);
    await withoutSecret.text();
    const a = (await received("ck-a")).at(-1);
    const b = (await received("ck-b")).at(-1);
    expect(a?.headers.authorization).toBe("Bearer sk-origin-secret");
    expect(b?.headers.authorization).toBeUndefined();
    for (const r of [a, b]) {
      expect(JSON.stringify(r)).not.toContain("sk-router-");
    }
  });

  it("a revoked key is refused by an isolate that did not revoke it once its cache expires", async () => {
    const other = await createKey({ name: "revoked elsewhere", models: [MODEL] });
    const ok = await chat(MODEL, hi, { headers: bearer(other.key) });
    expect(ok.status).toBe(200);
    await ok.text();
    // Another location's DELETE reaches this one through KV alone.
    await env.SETTINGS.delete(`client-key:${other.id}`);
    await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 50));
    expect((await error(await chat(MODEL, hi, { headers: bearer(other.key) })))[1].code).toBe(
      "invalid_api_key",
    );
  });
});

describe("once a key names every pool (`*`), every pool needs a key", () => {
  let key: CreatedKey;
  beforeAll(async () => {
    key = await createKey({ name: "one pool", models: [MODEL] });
    await createKey({ name: "every pool", models: ["*"] });
  });

  it("the key is checked before the body is read: a broken body without a key is a 401", async () => {
    const res = await call("/v1/chat/completions", { method: "POST", body: "{not json" });
    expect((await error(res))[1].code).toBe("invalid_api_key");
  });

  it("the models list needs a key, and shows the pools it may use", async () => {
    expect(await error(await call("/v1/models"))).toEqual([
      401,
      expect.objectContaining({ code: "invalid_api_key" }),
    ]);
    const models = await call("/v1/models", { headers: bearer(key.key) });
    const listed = (await models.json()) as { data: { id: string }[] };
    expect(listed.data.map((m) => m.id)).toEqual([MODEL]);
  });

  it("a model the key does not list: 403 model_not_allowed; `*` allows every model", async () => {
    const res = await chat(OTHER, hi, { headers: bearer(key.key) });
    expect(await error(res)).toEqual([
      403,
      {
        message: `this API key does not have access to model '${OTHER}'`,
        type: "invalid_request_error",
        code: "model_not_allowed",
        param: "model",
      },
    ]);
    const all = await createKey({ name: "all", models: ["*"] });
    for (const model of [MODEL, OTHER]) {
      const ok = await chat(model, hi, { headers: bearer(all.key) });
      expect(ok.status).toBe(200);
      await ok.text();
    }
  });

  it("the log line names the key's id and priority, never the key", async () => {
    const batch = await createKey({ name: "logged", models: [MODEL], priority: "batch" });
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      if (typeof line === "string" && line.includes('"msg":"llm_request"')) lines.push(line);
    });
    const res = await chat(MODEL, hi, { headers: bearer(batch.key) });
    await res.text();
    const denied = await chat(OTHER, hi, { headers: bearer(batch.key) });
    await denied.text();
    await waitFor(() => lines.length >= 2, 5000, "two log lines");
    const [served, refused] = lines.map((l) => JSON.parse(l) as RequestLogLine);
    expect(served).toMatchObject({ status: 200, keyId: batch.id, priority: "batch" });
    expect(refused).toMatchObject({ status: 403, keyId: batch.id, error: "model_not_allowed" });
    for (const line of lines) expect(line).not.toContain(batch.key);
  });
});

describe("metrics", () => {
  it("requests and prompt tokens per key id, never the key, in /admin/state and /metrics", async () => {
    const key = await createKey({ name: "counted", models: [MODEL] });
    for (let i = 0; i < 3; i++) {
      const res = await chat(MODEL, hi, { headers: bearer(key.key) });
      expect(res.status).toBe(200);
      await res.text();
    }
    const keys = async () => {
      const state = (await (await admin(`/admin/state?model=${MODEL}`)).json()) as {
        object: { metrics: { keys: Record<string, { requests: { ok?: number } }> } };
      };
      return state.object.metrics.keys;
    };
    await waitFor(async () => (await keys())[key.id]?.requests.ok === 3, 5000, "3 counted");
    expect((await keys())[key.id]).toMatchObject({ promptTokens: expect.any(Number) });
    const text = await (await admin("/metrics")).text();
    expect(text).toContain(
      `llm_router_key_requests_total{model="${MODEL}",key="${key.id}",outcome="ok"} 3`,
    );
    expect(text).toMatch(
      new RegExp(`llm_router_key_prompt_tokens_total\\{model="${MODEL}",key="${key.id}"\\} [1-9]`),
    );
    expect(text).not.toContain(key.key);
  });
});

describe("rate limits", () => {
  it("requests per minute: the tier's binding answers 429 rate_limit_exceeded with Retry-After", async () => {
    const key = await createKey({ name: "rpm", models: [MODEL], limits: { requestsPerMinute: 5 } });
    const before = await hits("ck-a");
    // Windows are whole minutes: if one ends mid-test, the 429 comes within 11 requests anyway.
    let served = 0;
    let limited: Response | null = null;
    for (let i = 0; i < 11 && limited === null; i++) {
      const res = await chat(MODEL, hi, { headers: bearer(key.key) });
      if (res.status === 429) limited = res;
      else {
        expect(res.status).toBe(200);
        await res.text();
        served++;
      }
    }
    expect(limited).not.toBeNull();
    expect(served).toBeGreaterThanOrEqual(5);
    const res = limited as Response;
    const retryAfter = Number(res.headers.get("retry-after"));
    const retryAfterMs = Number(res.headers.get("retry-after-ms"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Math.ceil(retryAfterMs / 1000)).toBe(retryAfter);
    const [status, e] = await error(res);
    expect([status, e.type, e.code, e.param]).toEqual([
      429,
      "requests",
      "rate_limit_exceeded",
      null,
    ]);
    expect(e.message).toContain(`key ${key.id}`);
    expect(await hits("ck-a")).toBe(before + served);
  });

  it("prompt tokens per minute: 429 with Retry-After when the bucket is in debt, served once it is repaid", async () => {
    // 6,000 tokens a minute refill at 100 a second; a first prompt of budget + 50 tokens
    // passes (the bucket was full) and leaves it in debt by what the engine counted over the
    // budget (the test origin counts the whole body, a few tokens more): under a second to repay.
    const perMinute = 6000;
    const key = await createKey({
      name: "tpm",
      models: [MODEL],
      limits: { promptTokensPerMinute: perMinute },
    });
    const content = "x".repeat((perMinute + 50) * 4);
    const messages = [{ role: "user", content }];
    const tokens = promptKey({ model: MODEL, messages }).promptTokens;
    expect(tokens).toBeGreaterThan(perMinute);
    const first = await chat(MODEL, messages, { headers: bearer(key.key) });
    expect(first.status).toBe(200);
    const { usage } = (await first.json()) as { usage: { prompt_tokens: number } };
    expect(usage.prompt_tokens).toBeGreaterThanOrEqual(tokens);
    const before = await hits("ck-a");
    const second = await chat(MODEL, hi, { headers: bearer(key.key) });
    const [status, e] = await error(second.clone());
    expect([status, e.type, e.code]).toEqual([429, "tokens", "rate_limit_exceeded"]);
    const retryAfterMs = Number(second.headers.get("retry-after-ms"));
    const debtMs = ((usage.prompt_tokens - perMinute) * 60_000) / perMinute;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(Math.ceil(debtMs));
    expect(second.headers.get("retry-after")).toBe(String(Math.ceil(retryAfterMs / 1000)));
    expect(await hits("ck-a")).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, retryAfterMs + 10));
    const third = await chat(MODEL, hi, { headers: bearer(key.key) });
    expect(third.status).toBe(200);
    await third.text();
  });
});

describe("after every key is revoked", () => {
  it("keys stay enforced: revoking the last key does not open the router", async () => {
    for (;;) {
      const page = (await (await admin("/admin/keys")).json()) as { keys: { id: string }[] };
      if (page.keys.length === 0) break;
      for (const { id } of page.keys) {
        expect((await admin(`/admin/keys/${id}`, { method: "DELETE" })).status).toBe(200);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 50));
    expect((await error(await chat(MODEL, hi)))[1].code).toBe("invalid_api_key");
  });
});
