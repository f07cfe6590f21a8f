/**
 * Fuzz of the Worker's public surface (issue 9's reliability suite): fast-check generates
 * hostile requests (bodies, headers, methods, paths, signatures, tokens) for both LLM routes,
 * OpenAI Responses (`POST /v1/responses` and the stored-response paths),
 * the engine webhook and the admin API, 2,000 cases a run, and every answer must hold:
 * - never a 5xx;
 * - every error the router makes in OpenAI's shape `{"error":{"message","type","code","param"}}`
 *   (an origin's own answers, marked by `x-router-origin`, pass through as they are);
 * - no secret (admin, webhook, metrics or origin key) in any answer;
 * - a well-formed request still routes afterwards (checked every 50 cases and after each run);
 * - no signed batch, whatever its `at`, holds off the next batch of its origin made at the
 *   furthest `at` ahead a batch may have (checked after the webhook run);
 * - what reaches the origin (its echo, `x-test-received`): no steering header in any spelling
 *   (`x_prefiller_host_port` too), no header the request's `Connection` lists, and only the
 *   router's forwarding headers (issue 24).
 * And requests that reuse `x-request-id`s at once in pools with admission, both modes: each is
 * admitted by its pool's admission (never the fallback router) or shed, never a 5xx but a shed's
 * 503 (issue 24, item 1).
 * Seeds are random; a failure prints the seed and the shrunk request to reproduce it with.
 * What the generators cannot reach by construction: signed webhooks for the pool the routing
 * check uses (a valid `health: down` would rightly take it out), and admin documents that are
 * valid (a valid document would rightly replace the settings), but for one run of pool names
 * at the storage limits (issue 24), which keeps the routing check's pools in each document.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_AHEAD_MS } from "../../../core/engine-events.ts";
import { MODEL_NAME_MAX_BYTES } from "../../../core/settings/model-name.ts";
import { FORWARDING_HEADERS, STEERING_HEADERS } from "../../test/fixture.ts";
import {
  admin,
  chat,
  engineBatch,
  nowSeconds,
  origin,
  pool,
  postSigned,
  putSettings,
  sign,
  signBatch,
} from "../../test/helpers.ts";
import { type Hostile, printable, SECRETS, send } from "../../test/hostile-requests.ts";

const MODEL = "fuzz-model";
const VICTIM_MODEL = "fuzz-victim-model";
const VICTIM = "fz-victim";
const ROUTED_BY = "fz-a";
const CHECK_EVERY = 50;

const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "not_found_error",
  "rate_limit_error",
  "server_error",
];

/**
 * One origin that prefills 1 token/s: while it serves one request the others wait (maxWaitMs 0),
 * two at most, each up to 300 ms; `routeTimeoutMs` leaves the object ample time to answer.
 */
const reusePool = (coordination: "object" | "edge") =>
  pool([origin(`fz-reuse-${coordination}`)], {
    coordination,
    ...(coordination === "edge" ? { edge: { flushMs: 10, warmMs: 0 } } : {}),
    routeTimeoutMs: 5000,
    prefillTokensPerSecond: 1,
    admission: { maxWaitMs: 0, queueTimeoutMs: 300, maxQueued: 2 },
  });
const REUSE_POOLS = {
  "fuzz-reuse-object": reusePool("object"),
  "fuzz-reuse-edge": reusePool("edge"),
};

const POOLS = {
  [MODEL]: pool([origin(ROUTED_BY, "ok", { apiKeySecret: "TEST_ORIGIN_KEY" })]),
  [VICTIM_MODEL]: pool([origin(VICTIM)]),
  ...REUSE_POOLS,
};

beforeAll(async () => {
  await putSettings({ pools: POOLS });
});

// ---- generators --------------------------------------------------------------------------

const weird = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  printable(40),
  fc.constantFrom(
    "",
    "\u0000",
    "\ud800",
    "\udfff",
    "__proto__",
    "constructor",
    "toString",
    "\u0002tools\u001e",
    "../../admin",
    "%00",
    "😀".repeat(40),
    "\u202e",
  ),
);
const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, -1, 0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, Number.MAX_SAFE_INTEGER),
);
const json = fc.jsonValue({ maxDepth: 3 });
const anything = fc.oneof(weird, number, json, fc.constant(undefined));
/** Usually `likely` (so most requests get past the first check), else `other`. */
function mostly<T>(likely: fc.Arbitrary<T>, other: fc.Arbitrary<unknown> = anything) {
  return fc.oneof({ weight: 5, arbitrary: likely }, { weight: 1, arbitrary: other });
}

const part = mostly(
  fc.record(
    {
      type: mostly(fc.constantFrom("text", "image_url", "input_audio", "file", "refusal"), weird),
      text: mostly(weird),
      image_url: mostly(fc.record({ url: weird })),
      input_audio: mostly(fc.record({ data: weird })),
      file: mostly(fc.record({ file_id: weird })),
      refusal: mostly(weird),
    },
    { requiredKeys: ["type"] },
  ),
);
const message = mostly(
  fc.record(
    {
      role: mostly(fc.constantFrom("user", "assistant", "system", "tool")),
      content: mostly(fc.oneof(weird, fc.array(part, { maxLength: 4 }))),
      name: mostly(weird),
      tool_calls: mostly(
        fc.array(fc.record({ function: fc.record({ name: weird, arguments: weird }) }), {
          maxLength: 2,
        }),
      ),
    },
    { requiredKeys: ["role", "content"] },
  ),
);
const model = mostly(fc.constant(MODEL), fc.oneof(fc.constant(VICTIM_MODEL), anything));
const chatBody = fc.record(
  {
    model,
    messages: mostly(fc.array(message, { minLength: 1, maxLength: 5 })),
    tools: mostly(fc.array(json, { maxLength: 3 })),
    stream: mostly(fc.boolean()),
  },
  { requiredKeys: ["model", "messages"] },
);
const tokenIds = fc.array(mostly(fc.nat(200_000), number), { minLength: 1, maxLength: 40 });
const completionBody = fc.record(
  {
    model,
    prompt: mostly(
      fc.oneof(
        weird,
        fc.array(weird, { minLength: 1, maxLength: 4 }),
        tokenIds,
        fc.array(tokenIds, { minLength: 1, maxLength: 3 }),
      ),
    ),
    stream: mostly(fc.boolean()),
  },
  { requiredKeys: ["model", "prompt"] },
);

/** OpenAI Responses: `input` items of every kind, `instructions`, `tools`, stored responses. */
const inputItem = mostly(
  fc.oneof(
    fc.record(
      {
        type: mostly(fc.constant("message")),
        role: mostly(fc.constantFrom("user", "assistant", "system", "developer")),
        content: mostly(
          fc.oneof(
            weird,
            fc.array(
              fc.record({
                type: mostly(fc.constantFrom("input_text", "output_text", "input_image")),
                text: mostly(weird),
                image_url: mostly(weird),
              }),
              { maxLength: 3 },
            ),
          ),
        ),
      },
      { requiredKeys: ["role"] },
    ),
    fc.record({
      type: mostly(fc.constantFrom("function_call", "function_call_output", "reasoning")),
      call_id: mostly(weird),
      name: mostly(weird),
      arguments: mostly(weird),
      output: mostly(weird),
    }),
  ),
);
const responseId = mostly(
  fc.constantFrom("resp_fuzz_unknown", "resp_", "a"),
  fc.oneof(weird, anything),
);
const responsesBody = fc.record(
  {
    model,
    input: mostly(fc.oneof(weird, fc.array(inputItem, { maxLength: 5 }))),
    instructions: mostly(weird),
    tools: mostly(fc.array(json, { maxLength: 3 })),
    previous_response_id: responseId,
    store: mostly(fc.boolean()),
    stream: mostly(fc.boolean()),
  },
  { requiredKeys: ["model"] },
);
/** A tool list as long as an agent's, and longer. */
const hugeTools = fc
  .integer({ min: 100, max: 20_000 })
  .map((n) => `"tools":[${'{"type":"function","name":"t","parameters":{}},'.repeat(n)}{}]`);
const storedResponsePath = fc
  .tuple(
    mostly(fc.constantFrom("resp_fuzz_unknown", "resp_1"), weird),
    fc.constantFrom("", "/input_items", "/", "/cancel"),
  )
  .map(([id, tail]) => `/v1/responses/${encodeUri(String(id))}${tail}`);

/** `encodeURIComponent`, with lone surrogates (which it refuses) replaced. */
const encodeUri = (text: string) =>
  encodeURIComponent(
    text.replace(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      "\ufffd",
    ),
  );

const nest = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
/** Raw fields no generator of values produces: prototype keys, duplicates, nesting, bulk. */
const hostileField = fc.oneof(
  fc.constantFrom(
    '"__proto__":{"model":"fuzz-victim-model"}',
    '"constructor":{"prototype":{"model":1}}',
    `"model":"${MODEL}"`,
    '"model":"other"',
    '"n":1e999',
    '"x":"\\ud800\\u0000\\u001e"',
  ),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `"tools":[${nest(depth)}]`),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `"x":${nest(depth)}`),
  fc.integer({ min: 1, max: 300_000 }).map((n) => `"x":[${"[],".repeat(n)}[]]`),
  fc.integer({ min: 1, max: 200_000 }).map((n) => `"prompt":[${"7,".repeat(n)}7]`),
  fc.integer({ min: 1, max: 200_000 }).map((n) => `"x":"${"a".repeat(n)}"`),
);
const withField = (text: string, field: string) =>
  text.startsWith("{") ? `{${field}${text === "{}" ? "" : ","}${text.slice(1)}` : text;

const bytes = fc.uint8Array({ maxLength: 200 });
const BOM = "\ufeff";
/** A body as the client sends it: JSON of plausible shapes, mangled JSON, text or raw bytes. */
const bodyOf = <T>(plausible: fc.Arbitrary<T>, anyJson: fc.Arbitrary<unknown> = json) =>
  fc.oneof(
    { weight: 4, arbitrary: plausible.map((v) => JSON.stringify(v)) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(plausible, hostileField)
        .map(([v, field]) => withField(JSON.stringify(v), field)),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(plausible, fc.nat(), printable(3)).map(([v, at, junk]) => {
        const text = JSON.stringify(v);
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + junk + text.slice(cut + (at % 3));
      }),
    },
    { weight: 1, arbitrary: plausible.map((v) => BOM + JSON.stringify(v)) },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: printable(100) },
    { weight: 1, arbitrary: bytes },
  );

const headerName = fc.oneof(
  fc.constantFrom(
    "content-type",
    "accept",
    "accept-encoding",
    "authorization",
    "cookie",
    "connection",
    "keep-alive",
    "te",
    "upgrade",
    "expect",
    "range",
    "origin",
    "x-api-key",
    "x-request-id",
    "x-router-session",
    "x-router-origin",
    "x-forwarded-for",
    "cf-connecting-ip",
    "x-prefiller-host-port",
    "x-prefiller-url",
    "x-encoder-hosts-ports",
    "x-hop",
    "x-custom",
    ...STEERING_HEADERS,
    ...FORWARDING_HEADERS,
    "x-original-host",
  ),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,19}$/),
  // Underscore spellings, which some servers read as the dashed names.
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,19}$/),
);
const headerValue = fc.oneof(
  printable(100),
  fc.constantFrom(
    "application/json",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/json; charset=utf-16",
    "text/event-stream",
    "gzip, br, zstd",
    "close, x-hop",
    "x-custom, x-hop",
    "keep-alive, X-Custom , x-prefiller-host-port",
    "203.0.113.9",
    "upgrade",
    "websocket",
    "100-continue",
    "bytes=0-1",
    "Bearer sk-client",
  ),
  fc.tuple(printable(1), fc.integer({ min: 100, max: 12_000 })).map(([c, n]) => c.repeat(n)),
);
const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 });
const method = mostly(
  fc.constant("POST"),
  fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS"),
) as fc.Arbitrary<string>;

// ---- checks ------------------------------------------------------------------------------

async function expectSafe(res: Response, req: Hostile): Promise<void> {
  const text = await res.text();
  const what = `${req.method} ${req.path} -> ${res.status} ${text.slice(0, 300)}`;
  expect(res.status, what).toBeLessThan(500);
  expectCleanAtOrigin(res, req, what);
  for (const secret of SECRETS) expect(text.includes(secret), what).toBe(false);
  // An origin's own answer (e.g. an engine's 400) is passed through as it is (docs/api.md).
  if (res.status < 400 || res.headers.has("x-router-origin")) return;
  let body: unknown;
  expect(() => {
    body = JSON.parse(text);
  }, what).not.toThrow();
  expect(Object.keys(body as object), what).toEqual(["error"]);
  const error = (body as { error: Record<string, unknown> }).error;
  expect(typeof error.message, what).toBe("string");
  expect(typeof error.code, what).toBe("string");
  expect(ERROR_TYPES, what).toContain(error.type);
  expect(error.param === null || typeof error.param === "string", what).toBe(true);
}

/** The router's forwarding headers for a request to https://router.test with these headers. */
function routerForwarding(sent: Headers): Record<string, string> {
  // Repeated headers are joined with ", " and the joined value is trimmed in transit, so two
  // empty `cf-connecting-ip` headers reach the Worker as "," (seed -2093080809 found it).
  const address = sent.get("cf-connecting-ip")?.trim() ?? null;
  return {
    ...(address === null ? {} : { "x-forwarded-for": address }),
    "x-forwarded-proto": "https",
    "x-forwarded-host": "router.test",
  };
}

/** What the origin echoed it received holds nothing a client must not send it. */
function expectCleanAtOrigin(res: Response, req: Hostile, what: string): void {
  const echo = res.headers.get("x-test-received");
  if (echo === null) return;
  const seen = JSON.parse(echo) as Record<string, string>;
  const sent = new Headers(req.headers);
  for (const name of STEERING_HEADERS) expect(seen[name], `${what}: ${name}`).toBeUndefined();
  const forwarding = Object.fromEntries(
    Object.entries(seen).filter(([name]) =>
      (FORWARDING_HEADERS as readonly string[]).includes(name),
    ),
  );
  expect(forwarding, what).toEqual(routerForwarding(sent));
  const listed = (sent.get("connection") ?? "").split(",").map((n) => n.trim().toLowerCase());
  for (const name of ["x-hop", "x-custom"]) {
    if (listed.includes(name)) expect(seen[name], `${what}: ${name}`).toBeUndefined();
  }
}

async function expectStillRoutes(): Promise<void> {
  const res = await chat(MODEL, [{ role: "user", content: "still routing?" }]);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("x-router-origin")).toBe(ROUTED_BY);
  await res.text();
}

/** Run `numRuns` hostile requests, checking each answer and, every so often, that routing works. */
async function fuzz(requests: fc.Arbitrary<Hostile | Promise<Hostile>>, numRuns: number) {
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(requests, async (pending) => {
      const req = await pending;
      const res = send(req);
      fc.pre(res !== undefined);
      await expectSafe(await (res as Promise<Response>), req);
      if (++cases % CHECK_EVERY === 0) await expectStillRoutes();
    }),
    { numRuns },
  );
  await expectStillRoutes();
}

// ---- the surfaces ------------------------------------------------------------------------

const oddLlmPath = fc.constantFrom(
  "/v1/chat/completions/",
  "//v1/completions",
  "/v1/completions?stream=true&model=x",
  "/V1/completions",
  "/v1/chat/completions%00",
  "/v1/chat//completions",
);

const event = mostly(
  fc.oneof(
    fc.record({
      type: fc.constant("load"),
      running: mostly(fc.nat(1000), number),
      waiting: mostly(fc.nat(1000), number),
      kvUsage: mostly(fc.double({ min: 0, max: 1, noNaN: true }), number),
    }),
    fc.record({ type: fc.constant("capacity"), kvCapacityTokens: mostly(fc.nat(), number) }),
    fc.record({ type: fc.constant("cache-reset") }),
    fc.record({
      type: fc.constant("health"),
      status: mostly(fc.constantFrom("up", "draining", "down")),
    }),
    fc.record({ type: weird, extra: anything }),
  ),
);
// With and without the batch `id` and `at` that replay protection adds (issue 9, item 3); `at`
// also ahead of the router's clock, within the skew and past it (issue 24, item 4).
const at = fc.oneof(
  fc.constant(0).map(() => Date.now()),
  fc
    .oneof(fc.integer({ min: -400_000, max: 400_000 }), fc.constantFrom(4_999, 5_001, 45_000))
    .map((ahead) => Date.now() + ahead),
);
const batch = fc.record(
  {
    origin: mostly(fc.constantFrom(VICTIM, "nobody")),
    id: mostly(fc.uuid()),
    at: mostly(at),
    events: mostly(fc.array(event, { minLength: 1, maxLength: 5 })),
  },
  { requiredKeys: ["origin", "events"] },
);
const signature = mostly(
  fc.constant("valid"),
  fc.oneof(
    fc.constantFrom("stale", "future", "forged", "none"),
    printable(150),
    fc.constantFrom("t=,v1=", "t=abc,v1=zz", `v1=${"0".repeat(64)}`, `t=1e20,v1=${"0".repeat(64)}`),
  ),
);
/** The `x-router-signature` header for `body`, as the generated kind of signature asks. */
async function signatureHeader(kind: unknown, body: string): Promise<[string, string][]> {
  const now = nowSeconds();
  const signed: Record<string, () => Promise<string>> = {
    valid: () => sign(body, now),
    stale: () => sign(body, now - 400),
    future: () => sign(body, now + 400),
    forged: () => sign(body, now, "not-the-secret"),
  };
  if (kind === "none") return [];
  const make = typeof kind === "string" ? signed[kind] : undefined;
  return [["x-router-signature", make ? await make() : String(kind)]];
}

const adminToken = fc.oneof(
  fc.constantFrom("correct", "correct", "none"),
  printable(80),
  fc.constantFrom(
    "Bearer",
    "Bearer ",
    "bearer test-admin-token",
    "Basic dGVzdA==",
    "Bearer test-admin-tokenX",
    "Bearer  test-admin-token",
  ),
);
const adminPath = fc.oneof(
  fc.constantFrom(
    "/admin/settings",
    "/admin/settings",
    "/admin/state",
    "/admin",
    "/admin/",
    "/admin/settings/",
    "/admin/../admin/settings",
  ),
  fc.oneof(weird, fc.constant(MODEL)).map((m) => `/admin/state?model=${encodeUri(String(m))}`),
  printable(30).map((p) => `/admin/${encodeUri(p)}`),
);
// Every document is invalid by construction: an unknown top-level field, or not an object.
const invalidDocument = fc.record({ pools: anything, fuzzUnknownField: json });
const noPools = json.filter((v) => typeof v !== "object" || v === null || !("pools" in v));

describe("fuzz: hostile requests never get a 5xx or a malformed error", () => {
  it("LLM routes: 1,200 hostile bodies and headers", async () => {
    const route = (path: fc.Arbitrary<string>, body: fc.Arbitrary<unknown>) =>
      fc.record({ method, path, headers, body: bodyOf(body) });
    const request = fc.oneof(
      { weight: 6, arbitrary: route(fc.constant("/v1/chat/completions"), chatBody) },
      { weight: 5, arbitrary: route(fc.constant("/v1/completions"), completionBody) },
      { weight: 1, arbitrary: route(oddLlmPath, fc.oneof(chatBody, completionBody)) },
    );
    await fuzz(request, 1200);
    // About 16 s alone on a loaded 2-core machine; beside the other test files, past 20.
  }, 60_000);

  it("/v1/responses: 600 hostile bodies and headers, ids and huge tool lists", async () => {
    const withTools = fc
      .tuple(responsesBody, hugeTools)
      .map(([v, tools]) => withField(JSON.stringify(v), tools));
    const request = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          method,
          path: fc.constant("/v1/responses"),
          headers,
          body: bodyOf(responsesBody),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          method,
          path: fc.constant("/v1/responses"),
          headers,
          body: withTools,
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ method, path: storedResponsePath, headers, body: bodyOf(json) }),
      },
    );
    await fuzz(request, 600);
  }, 60_000);

  it("engine webhook: 400 hostile batches, most of them signed", async () => {
    const request = fc.record({ method, headers, body: bodyOf(batch), signature }).map(
      async ({ signature, body, headers, ...rest }): Promise<Hostile> => ({
        ...rest,
        path: "/v1/engine/events",
        body,
        headers: [
          ...headers,
          ...(await signatureHeader(signature, typeof body === "string" ? body : "")),
        ],
      }),
    );
    await fuzz(request, 400);
    // No batch it sent holds off the victim's next one, made as far ahead as a batch may be.
    const next = engineBatch(
      VICTIM,
      [{ type: "health", status: "up" }],
      Date.now() + BATCH_AHEAD_MS,
    );
    expect((await postSigned(await signBatch(next))).status).toBe(200);
  });

  it("admin API: 400 hostile requests, with and without the token", async () => {
    const adminMethod = mostly(fc.constantFrom("GET", "PUT"), method) as fc.Arbitrary<string>;
    const request = fc
      .record({
        method: adminMethod,
        path: adminPath,
        headers,
        body: bodyOf(invalidDocument, noPools),
        token: adminToken,
      })
      .map(({ token, headers, ...rest }): Hostile => {
        const auth: [string, string][] =
          token === "none"
            ? []
            : [["authorization", token === "correct" ? `Bearer ${env.ADMIN_TOKEN}` : token]];
        return { ...rest, headers: [...headers.filter(([n]) => n !== "authorization"), ...auth] };
      });
    await fuzz(request, 400);
  });
});

// ---- request-id reuse under admission ----------------------------------------------------

/** Ids a client may repeat (a retry): the longest kept, and some replaced (too long, not a token). */
const requestId = fc.option(
  fc.constantFrom(
    "retry-1",
    "retry-1",
    "retry-2",
    "RETRY-1",
    "k=v",
    "a".repeat(255),
    "a".repeat(256),
    "bad id!",
  ),
  { nil: undefined },
);
const reuseCase = fc.record({
  model: fc.constantFrom(...Object.keys(REUSE_POOLS)),
  requests: fc.array(fc.record({ id: requestId, stream: fc.boolean() }), {
    minLength: 2,
    maxLength: 8,
  }),
});

/** Admitted by the pool's admission (not the fallback router), or shed as 429/503. */
function expectAdmittedOrShed(res: Response, text: string, what: string): void {
  const seen = `${what} -> ${res.status} ${res.headers.get("x-router-reason")} ${text.slice(0, 200)}`;
  if (res.status === 200) {
    expect(res.headers.get("x-router-reason"), seen).not.toMatch(/^fallback-/);
    return;
  }
  expect([429, 503], seen).toContain(res.status);
  expect(res.headers.get("retry-after"), seen).toMatch(/^[1-9][0-9]*$/);
  const { error } = JSON.parse(text) as { error: { code: string } };
  expect(["overloaded", "over_share"], seen).toContain(error.code);
}

describe("fuzz: requests that reuse x-request-id in pools with admission", () => {
  it("60 bursts of 2-8 requests, ids repeated: each admitted or shed, never routed around admission, never a 500", async () => {
    await fc.assert(
      fc.asyncProperty(reuseCase, async ({ model, requests }) => {
        // Each answer is read as it comes, so an end frees room for the requests held.
        const answers = await Promise.all(
          requests.map(async ({ id, stream }, i) => {
            const res = await chat(model, [{ role: "user", content: `burst request ${i}` }], {
              stream,
              headers: id === undefined ? {} : { "x-request-id": id },
            });
            return { res, text: await res.text() };
          }),
        );
        const what = `${model} ${JSON.stringify(requests)}`;
        for (const { res, text } of answers) expectAdmittedOrShed(res, text, what);
      }),
      { numRuns: 60 },
    );
    await expectStillRoutes();
  }, 60_000);
});

describe("fuzz: pool names at the storage limits (issue 24)", () => {
  // Around 491 bytes of UTF-8 (KV's 512-byte key name less the marker prefix) and 256 code
  // points, in every width of UTF-8, with lone surrogates now and then.
  const unit = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom("a", "é", "€", "😀") },
    { weight: 1, arbitrary: fc.constantFrom("\ud800", "\udfff") },
  );
  const name = fc
    .tuple(
      fc.constantFrom("a", "é", "€", "😀"),
      fc.integer({ min: 100, max: 260 }),
      fc.array(unit, { maxLength: 6 }),
    )
    .map(([fill, n, tail]) => fill.repeat(n).slice(0, 256 - tail.length) + tail.join(""));
  const storable = (model: string) =>
    !/\p{Cs}/u.test(model) &&
    [...model].length <= 256 &&
    new TextEncoder().encode(model).byteLength <= MODEL_NAME_MAX_BYTES;

  it("60 names: accepted names route with a key made for them; refused ones are 400s that store nothing", async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(name, async (model) => {
        const what = `${JSON.stringify(model)} (${new TextEncoder().encode(model).byteLength} bytes)`;
        const put = await admin("/admin/settings", {
          method: "PUT",
          body: JSON.stringify({ pools: { ...POOLS, [model]: pool([origin("fz-limit")]) } }),
        });
        const keys = (await env.SETTINGS.list({ prefix: "client-key:" })).keys.length;
        const made = await admin("/admin/keys", {
          method: "POST",
          body: JSON.stringify({ name: "limit", models: [model] }),
        });
        if (!storable(model)) {
          refused++;
          expect([put.status, made.status], what).toEqual([400, 400]);
          await expectSafe(put, { method: "PUT", path: "/admin/settings", headers: [], body: "" });
          expect((await env.SETTINGS.list({ prefix: "client-key:" })).keys.length, what).toBe(keys);
          return;
        }
        expect([put.status, made.status], what).toEqual([200, 201]);
        const { key } = (await made.json()) as { key: string };
        const ask = () =>
          chat(model, [{ role: "user", content: "hi" }], {
            headers: { authorization: `Bearer ${key}` },
          });
        let res = await ask();
        // A settings read from KV that started before the PUT (another request's, after the
        // cache's TTL) can land after it and hold the document before for one TTL (200 ms).
        for (let i = 0; i < 10 && res.status === 404; i++) {
          await res.text();
          await new Promise((resolve) => setTimeout(resolve, 50));
          res = await ask();
        }
        expect(res.status, `${what}: ${await res.clone().text()}`).toBe(200);
        await res.text();
      }),
      { numRuns: 60 },
    );
    expect(refused).toBeGreaterThan(0);
    await putSettings({ pools: POOLS });
    await expectStillRoutes();
  }, 60_000);
});
