/**
 * The shared route steps on a bare Hono app with the Worker's error handler, as Hono tests its
 * own middleware (`app.request(path, init, env)`): bindings are whatever each test passes.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { signatureHeader } from "../../../core/webhook-signature.ts";
import { invalidRequest } from "../../errors/api-error.ts";
import { onError } from "../on-error.ts";
import type { AppEnv } from "./app-env.ts";
import { bearerGuard } from "./bearer-guard.ts";
import { limitBody } from "./body-limit.ts";
import { jsonBody } from "./json-body.ts";
import { webhookSignature } from "./webhook-signature.ts";

const bindings = (values: Record<string, string | undefined>) => values as unknown as Env;

async function error(res: Response): Promise<[number, string, string]> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return [res.status, body.error.code, body.error.message];
}

describe("bearerGuard", () => {
  const app = new Hono<AppEnv>()
    .use(bearerGuard({ tokens: (env) => [env.METRICS_TOKEN, env.ADMIN_TOKEN], disabled: "off" }))
    .get("/", (c) => c.text("in"));
  app.onError(onError);
  const get = (token: string | null, env: Env) =>
    app.request("/", token === null ? {} : { headers: { authorization: `Bearer ${token}` } }, env);

  it("lets in any of the tokens set, and no other", async () => {
    const env = bindings({ METRICS_TOKEN: "m", ADMIN_TOKEN: "a" });
    expect((await get("m", env)).status).toBe(200);
    expect((await get("a", env)).status).toBe(200);
    expect(await error(await get("x", env))).toEqual([
      401,
      "unauthorized",
      "missing or invalid bearer token",
    ]);
    expect((await get(null, env)).status).toBe(401);
  });

  it("is closed, not open, when no token is set (an empty one counts as unset)", async () => {
    const env = bindings({ METRICS_TOKEN: "", ADMIN_TOKEN: undefined });
    expect(await error(await get("", env))).toEqual([401, "unauthorized", "off"]);
  });
});

describe("limitBody and jsonBody", () => {
  const app = new Hono<AppEnv>()
    .post(
      "/fixed",
      limitBody({ maxBytes: 16, what: "batch" }),
      jsonBody({ what: "batch" }),
      async (c) => c.json({ json: c.get("json"), bytes: (await c.req.arrayBuffer()).byteLength }),
    )
    .post(
      "/object",
      limitBody({ maxBytes: async (c) => Number(c.env.SETTINGS_CACHE_MS), what: "request body" }),
      jsonBody({
        object: true,
        precheck: (text) => {
          if (text.includes("deep")) throw invalidRequest("invalid_value", "too deep");
        },
      }),
      (c) => c.json(c.get("json")),
    );
  app.onError(onError);
  const post = (path: string, body: BodyInit, env = bindings({ SETTINGS_CACHE_MS: "32" })) =>
    app.request(path, { method: "POST", body }, env);
  /** A body without a Content-Length, as a chunked upload arrives. */
  const chunked = (text: string) =>
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    });

  it("passes the parsed body on, and the same bytes to read again", async () => {
    const res = await post("/fixed", '{"a":"é"}');
    expect(await res.json()).toEqual({ json: { a: "é" }, bytes: 10 });
  });

  it("refuses a body over the limit with a 413 naming it, with or without a length", async () => {
    const big = `"${"x".repeat(20)}"`;
    for (const body of [big, chunked(big)]) {
      expect(await error(await post("/fixed", body))).toEqual([
        413,
        "request_too_large",
        "batch is larger than 16 bytes",
      ]);
    }
    // The limit found per request (here from a binding, as the LLM routes read settings).
    const over = await post("/object", chunked(`{"k":"${"x".repeat(40)}"}`));
    expect(await error(over)).toEqual([
      413,
      "request_too_large",
      "request body is larger than 32 bytes",
    ]);
  });

  it("refuses text that is not JSON, or not an object where one is required", async () => {
    expect(await error(await post("/fixed", "{not"))).toEqual([
      400,
      "invalid_json",
      "batch is not valid JSON",
    ]);
    expect((await post("/fixed", "[1]")).status).toBe(200);
    expect(await error(await post("/object", "[1]"))).toEqual([
      400,
      "invalid_json",
      "request body must be a JSON object",
    ]);
  });

  it("runs the precheck on the text before parsing it", async () => {
    // Parsed first, this valid JSON that is not an object would be `invalid_json`.
    expect(await error(await post("/object", '"deep"'))).toEqual([
      400,
      "invalid_value",
      "too deep",
    ]);
  });
});

describe("webhookSignature", () => {
  const app = new Hono<AppEnv>().post("/", webhookSignature(), jsonBody(), (c) =>
    c.json(c.get("json")),
  );
  app.onError(onError);
  const now = () => Math.floor(Date.now() / 1000);
  const post = (body: string, signature: string | null, secret?: string) =>
    app.request(
      "/",
      {
        method: "POST",
        body,
        headers: signature === null ? {} : { "x-router-signature": signature },
      },
      bindings({ WEBHOOK_SECRET: secret }),
    );

  it("lets a body signed with the secret through to its JSON", async () => {
    const res = await post('{"a":1}', await signatureHeader("s", '{"a":1}', now()), "s");
    expect(await res.json()).toEqual({ a: 1 });
  });

  it("refuses before reading the payload: bad JSON with a bad signature is a 401", async () => {
    expect(await error(await post("{not", null, "s"))).toEqual([
      401,
      "signature_missing",
      `the x-router-signature header is missing: sign each batch with the router's webhook secret (docs/api.md, "POST /v1/engine/events")`,
    ]);
    const forged = await signatureHeader("other", "{not", now());
    expect((await error(await post("{not", forged, "s")))[1]).toBe("signature_mismatch");
  });

  it("refuses every webhook when the Worker has no secret", async () => {
    const signed = await signatureHeader("s", "{}", now());
    expect(await error(await post("{}", signed))).toEqual([
      401,
      "signature_missing",
      "this router has no webhook secret set (WEBHOOK_SECRET), so it refuses every webhook",
    ]);
  });
});
