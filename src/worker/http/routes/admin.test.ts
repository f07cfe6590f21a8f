import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { admin, call, chat, origin, originBase, pool, putSettings } from "../../test/helpers.ts";

const MODEL = "admin-model";

const good = {
  pools: { [MODEL]: pool([origin("ad-a")], { policy: { type: "round-robin" } }) },
};

beforeAll(async () => {
  await putSettings(good);
});

async function routedTo(): Promise<{ origin: string | null; policy: string | null }> {
  const res = await chat(MODEL, [{ role: "user", content: "hi" }]);
  expect(res.status).toBe(200);
  await res.text();
  return { origin: res.headers.get("x-router-origin"), policy: res.headers.get("x-router-policy") };
}

describe("admin API", () => {
  it("missing or wrong token: 401 in the OpenAI error shape", async () => {
    for (const authorization of [undefined, "Bearer wrong-token", `Bearer ${env.ADMIN_TOKEN}x`]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      for (const path of ["/admin/settings", `/admin/state?model=${MODEL}`, "/admin/state"]) {
        const res = await call(path, { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        const body = (await res.json()) as { error: { type: string } };
        expect(body.error.type).toBe("authentication_error");
      }
    }
    const put = await call("/admin/settings", {
      method: "PUT",
      headers: { authorization: "Bearer wrong-token" },
      body: JSON.stringify(good),
    });
    expect(put.status).toBe(401);
  });

  it("GET /admin/settings returns the document in force, defaults filled in", async () => {
    const res = await admin("/admin/settings");
    expect(res.status).toBe(200);
    const settings = (await res.json()) as {
      version: number;
      pools: Record<string, { chunkBytes: number }>;
    };
    expect(settings.version).toBe(1);
    expect(settings.pools[MODEL]?.chunkBytes).toBe(256);
    expect(Number(res.headers.get("x-settings-revision"))).toBeGreaterThan(0);
  });

  it("invalid settings: 400 naming each bad field, and nothing changes", async () => {
    const kvBefore = await env.SETTINGS.get("settings");
    const bad = {
      pools: {
        [MODEL]: {
          origins: [
            { id: "ad-b", url: "ftp://nope" },
            { id: "ad-c", url: `${originBase}/ok/c`, apiKeySecret: "NOPE_NOT_SET" },
          ],
          retry: { maxAttempts: 0 },
          typo: true,
        },
      },
    };
    const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(bad) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      error: { code: string; message: string; details: { field: string }[] };
    };
    expect(body.error.code).toBe("invalid_settings");
    const fields = body.error.details.map((d) => d.field);
    expect(fields).toContain('pools["admin-model"].origins[0].url');
    expect(fields).toContain('pools["admin-model"].retry.maxAttempts');
    expect(fields).toContain('pools["admin-model"].typo');
    expect(body.error.message).toContain("retry.maxAttempts");
    expect(await env.SETTINGS.get("settings")).toBe(kvBefore);
    expect((await routedTo()).origin).toBe("ad-a");
  });

  it("an origin key secret that is not set: 400 naming the field", async () => {
    const doc = {
      pools: { [MODEL]: pool([origin("ad-a", "ok", { apiKeySecret: "NOPE_NOT_SET" })]) },
    };
    const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(doc) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details.map((d) => d.field)).toEqual([
      'pools["admin-model"].origins[0].apiKeySecret',
    ]);
  });

  it("invalid JSON: 400", async () => {
    const res = await admin("/admin/settings", { method: "PUT", body: "{" });
    expect(res.status).toBe(400);
  });

  it("valid settings take effect without redeploy: new origins, new policy, new models", async () => {
    expect(await routedTo()).toEqual({ origin: "ad-a", policy: "round-robin" });
    const next = {
      pools: {
        [MODEL]: pool([origin("ad-b")], { policy: { type: "prefix-hash" } }),
        "admin-new-model": pool([origin("ad-n")]),
      },
    };
    const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(next) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      pools: { [MODEL]: "applied", "admin-new-model": "applied" },
    });
    expect(await routedTo()).toEqual({ origin: "ad-b", policy: "prefix-hash" });
    const models = (await (await call("/v1/models")).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id).sort()).toEqual([MODEL, "admin-new-model"]);
    // The object itself took the settings (pushed), not only this isolate.
    const state = (await env.ROUTER.getByName(MODEL).state())!;
    expect(state.router.origins.map((o) => o.id)).toEqual(["ad-b"]);
    await putSettings(good);
  });

  it("an invalid document written to KV directly keeps the last good one, reported on /admin/state", async () => {
    await env.SETTINGS.put("settings", JSON.stringify({ pools: { [MODEL]: { origins: [] } } }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await routedTo()).origin).toBe("ad-a");
    const res = await admin(`/admin/state?model=${MODEL}`);
    expect(res.status).toBe(200);
    const state = (await res.json()) as { settings: { rejected: { errors: { field: string }[] } } };
    expect(state.settings.rejected.errors.map((e) => e.field)).toEqual([
      'pools["admin-model"].origins',
    ]);
    await putSettings(good);
  });

  it("a valid document written to KV directly is picked up after the cache TTL", async () => {
    await env.SETTINGS.put(
      "settings",
      JSON.stringify({ pools: { [MODEL]: pool([origin("ad-kv")]) } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await routedTo()).origin).toBe("ad-kv");
    await putSettings(good);
  });

  it("GET /admin/state shows the pool without origin credentials", async () => {
    const secretUrl = `${originBase.replace("http://", "http://user:hunter2@")}/ok/ad-s?key=sk-123`;
    await putSettings({ pools: { [MODEL]: pool([{ id: "ad-s", url: secretUrl }]) } });
    const res = await admin(`/admin/state?model=${MODEL}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("sk-123");
    const state = JSON.parse(text) as {
      object: { router: { origins: { id: string; url: string }[]; recent: unknown[] } };
    };
    expect(state.object.router.origins).toMatchObject([
      { id: "ad-s", url: `${originBase}/ok/ad-s` },
    ]);
    const unknown = await admin("/admin/state?model=nope");
    expect(unknown.status).toBe(404);
    // Without `model`: every pool (what the dashboard polls), redacted the same way.
    const all = await admin("/admin/state");
    expect(all.status).toBe(200);
    const allText = await all.text();
    expect(allText).not.toContain("hunter2");
    const { pools } = JSON.parse(allText) as { pools: { model: string }[] };
    expect(pools.map((p) => p.model)).toEqual([MODEL]);
    await putSettings(good);
  });

  // Issue 9, item 5: the origin received `Bearer <ADMIN_TOKEN>`.
  it("apiKeySecret naming the router's own secrets was accepted: 400 naming each, no value echoed", async () => {
    // Every binding of this Worker (wrangler.toml, vitest config) but the test's origin key and
    // the test harness's own.
    const own = Object.keys(env).filter(
      (name) => name !== "TEST_ORIGIN_KEY" && !name.startsWith("__VITEST_POOL_WORKERS_"),
    );
    expect(own).toEqual(expect.arrayContaining(["ADMIN_TOKEN", "WEBHOOK_SECRET", "METRICS_TOKEN"]));
    const doc = {
      pools: {
        [MODEL]: pool(own.map((name, i) => origin(`ad-own${i}`, "ok", { apiKeySecret: name }))),
      },
    };
    const kvBefore = await env.SETTINGS.get("settings");
    const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(doc) });
    expect(res.status).toBe(400);
    const text = await res.text();
    for (const secret of [env.ADMIN_TOKEN, env.WEBHOOK_SECRET, env.METRICS_TOKEN]) {
      expect(text).not.toContain(secret);
    }
    const body = JSON.parse(text) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("invalid_settings");
    expect(body.error.details.map((d) => d.field)).toEqual(
      own.map((_, i) => `pools["admin-model"].origins[${i}].apiKeySecret`),
    );
    expect(await env.SETTINGS.get("settings")).toBe(kvBefore);
  });

  it("apiKeySecret ADMIN_TOKEN written to KV directly: rejected, the last good settings route, the origin never sees the token", async () => {
    const doc = {
      pools: { [MODEL]: pool([origin("ad-leak", "ok", { apiKeySecret: "ADMIN_TOKEN" })]) },
    };
    await env.SETTINGS.put("settings", JSON.stringify(doc));
    await new Promise((resolve) => setTimeout(resolve, 250));
    const res = await chat(MODEL, [{ role: "user", content: "hi" }]);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("ad-a");
    expect(res.headers.get("x-test-received")).not.toContain(env.ADMIN_TOKEN);
    await res.text();
    const state = (await (await admin(`/admin/state?model=${MODEL}`)).json()) as {
      settings: { rejected: { errors: { field: string }[] } };
    };
    expect(state.settings.rejected.errors.map((e) => e.field)).toEqual([
      'pools["admin-model"].origins[0].apiKeySecret',
    ]);
    await putSettings(good);
  });

  // Issue 9, item 6: the limit before the model is known was the largest pool's, 0 for none.
  it("an empty pool map made every LLM request a 413 'larger than 0 bytes': valid, unknown models 404", async () => {
    const put = await admin("/admin/settings", { method: "PUT", body: '{"pools":{}}' });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ pools: {} });
    const res = await chat(MODEL, [{ role: "user", content: "hi" }]);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
    const models = (await (await call("/v1/models")).json()) as { data: unknown[] };
    expect(models.data).toEqual([]);
    await putSettings(good);
  });

  it("a pool named __proto__ was accepted and silently dropped: 400 naming it", async () => {
    const text = `{"pools":{"__proto__":${JSON.stringify(pool([origin("ad-p")]))}}}`;
    const res = await admin("/admin/settings", { method: "PUT", body: text });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details.map((d) => d.field)).toEqual(["pools.__proto__"]);
    expect((await routedTo()).origin).toBe("ad-a");
  });

  // Issue 9, item 7: the answer read the isolate's revision after the push, by which time a
  // concurrent PUT had replaced it.
  it("concurrent PUTs answered with another request's revision: each answers the one it wrote", async () => {
    const docs = Array.from({ length: 8 }, (_, i) => ({
      pools: { [MODEL]: pool([origin(`ad-c${i}`)]) },
    }));
    const answers = await Promise.all(
      docs.map(async (doc) => {
        const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(doc) });
        expect(res.status).toBe(200);
        return ((await res.json()) as { revision: number }).revision;
      }),
    );
    expect(new Set(answers).size).toBe(docs.length);
    // KV holds one of the documents, under the revision its PUT answered.
    const kv = await env.SETTINGS.getWithMetadata<{ revision: number }>("settings");
    const inKv = docs.findIndex((d) => JSON.stringify(d) === kv.value);
    expect(inKv).toBeGreaterThanOrEqual(0);
    expect(kv.metadata?.revision).toBe(answers[inKv]);
    // The pool's object holds the newest revision, with that PUT's own settings.
    const newest = answers.indexOf(Math.max(...answers));
    const state = (await env.ROUTER.getByName(MODEL).state())!;
    expect(state.version).toMatchObject({ revision: answers[newest] });
    expect(state.router.origins.map((o) => o.id)).toEqual([`ad-c${newest}`]);
    await putSettings(good);
  });

  it("GET /healthz", async () => {
    const res = await call("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});
