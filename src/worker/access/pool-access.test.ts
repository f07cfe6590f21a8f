/**
 * Who may use a pool no key names (issue 24, item 7): nobody unless its settings say
 * `access: "open"`, so a fresh deploy serves no one until its operator says so. Through the
 * Worker's real entry point, for object and edge pools alike (access is decided before routing).
 * Markers live in the file's KV for good, so each test names pools of its own.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { PoolSettingsInput } from "../../core/settings/settings-schema.ts";
import { admin, call, chat, hits, origin, putSettings } from "../test/helpers.ts";
import { newClientKey } from "./client-key.ts";
import type { ClientKeyRecord } from "./key-record.ts";

/** Pools exactly as an operator writes them: no `access`, unless a test gives one. */
const closed = (id: string, extra: Partial<PoolSettingsInput> = {}) => ({
  origins: [origin(id)],
  ...extra,
});

const POOLS = {
  "pa-closed": closed("pa-a"),
  "pa-closed-edge": closed("pa-b", { coordination: "edge" }),
  "pa-open": closed("pa-c", { access: "open" }),
  "pa-keyed": closed("pa-d"),
  "pa-open-keyed": closed("pa-e", { access: "open" }),
  "pa-lagging": closed("pa-f"),
};

beforeAll(async () => {
  await putSettings({ pools: POOLS });
});

const hi = [{ role: "user", content: "hi" }];
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

interface OpenAiError {
  error: { message: string; type: string; code: string; param: string | null };
}

async function error(res: Response): Promise<[number, OpenAiError["error"]]> {
  return [res.status, ((await res.json()) as OpenAiError).error];
}

async function createKey(models: string[]): Promise<{ id: string; key: string }> {
  const res = await admin("/admin/keys", {
    method: "POST",
    body: JSON.stringify({ name: "access", models }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; key: string };
}

async function status(res: Response): Promise<number> {
  await res.text();
  return res.status;
}

describe("issue 24: a pool was open to anyone until some key named it", () => {
  it.each([
    ["pa-closed", "pa-a"],
    ["pa-closed-edge", "pa-b"],
  ])(
    "%s (no access set): 403 pool_closed saying what to do, with or without a key; nothing routed",
    async (model, id) => {
      const before = await hits(id);
      for (const headers of [{}, bearer("sk-anything"), bearer(`sk-router-${"0".repeat(16)}_x`)]) {
        const [code, e] = await error(await chat(model, hi, { headers }));
        expect([code, e.type, e.code, e.param]).toEqual([
          403,
          "invalid_request_error",
          "pool_closed",
          "model",
        ]);
        expect(e.message).toBe(
          `pool '${model}' takes no requests until a client key names it: create one with ` +
            `POST /admin/keys, or set "access": "open" in its settings`,
        );
      }
      const completion = await call("/v1/completions", {
        method: "POST",
        body: JSON.stringify({ model, prompt: "hi" }),
      });
      expect((await error(completion))[1].code).toBe("pool_closed");
      expect(await hits(id)).toBe(before);
    },
  );

  it('the settings say `access: "keys"` when they say nothing', async () => {
    const settings = (await (await admin("/admin/settings")).json()) as {
      pools: Record<string, { access: string }>;
    };
    expect(settings.pools["pa-closed"]?.access).toBe("keys");
    expect(settings.pools["pa-open"]?.access).toBe("open");
  });

  it('`access: "open"` serves clients without a key; the models list shows only open pools', async () => {
    expect(await status(await chat("pa-open", hi))).toBe(200);
    const list = (await (await call("/v1/models")).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).toEqual(["pa-open", "pa-open-keyed"]);
  });

  it("a key that names a closed pool opens it to keys: without one, the usual 401", async () => {
    const { key } = await createKey(["pa-keyed"]);
    expect(await status(await chat("pa-keyed", hi, { headers: bearer(key) }))).toBe(200);
    const [code, e] = await error(await chat("pa-keyed", hi));
    expect([code, e.code]).toEqual([401, "invalid_api_key"]);
    // The other closed pools stay closed, also to this key.
    const other = await chat("pa-closed", hi, { headers: bearer(key) });
    expect((await error(other))[1].code).toBe("pool_closed");
  });

  it("an open pool that a key names needs a key, as before (revoking it never reopens it)", async () => {
    const { id, key } = await createKey(["pa-open-keyed"]);
    expect((await error(await chat("pa-open-keyed", hi)))[0]).toBe(401);
    expect(await status(await chat("pa-open-keyed", hi, { headers: bearer(key) }))).toBe(200);
    await admin(`/admin/keys/${id}`, { method: "DELETE" });
    expect((await error(await chat("pa-open-keyed", hi)))[0]).toBe(401);
  });

  it("a key made elsewhere whose marker is not seen here yet passes; a key for other pools does not", async () => {
    // As KV may show another location's key before its marker: the record alone.
    const made = await newClientKey();
    const record: ClientKeyRecord = {
      id: made.id,
      hash: made.hash,
      name: "elsewhere",
      models: ["pa-lagging"],
      priority: "interactive",
      limits: { requestsPerMinute: null, promptTokensPerMinute: null },
      createdAt: Date.now(),
    };
    await env.SETTINGS.put(`client-key:${made.id}`, JSON.stringify(record));
    expect(await status(await chat("pa-lagging", hi, { headers: bearer(made.key) }))).toBe(200);
    expect((await error(await chat("pa-lagging", hi)))[1].code).toBe("pool_closed");
    const other = await createKey(["pa-keyed"]);
    const [code, e] = await error(await chat("pa-lagging", hi, { headers: bearer(other.key) }));
    expect([code, e.code]).toEqual([403, "pool_closed"]);
  });
});
