import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { messages, origin, pool, putSettings } from "../../test/helpers.ts";
import { type Hostile, printable, SECRETS, send } from "../../test/hostile-requests.ts";

const MODEL = "mfuzz-model";
const ROUTED_BY = "mfz-a";
const CHECK_EVERY = 50;

/** Anthropic's error types (errors/anthropic-error.ts). */
const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "api_error",
  "overloaded_error",
];

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool([origin(ROUTED_BY, "ok", { apiKeySecret: "TEST_ORIGIN_KEY" })], {
        maxBodyBytes: 2 * 1024 * 1024,
      }),
    },
  });
});

// ---- generators --------------------------------------------------------------------------

const weird = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  printable(40),
  fc.constantFrom("", "\u0000", "\ud800", "__proto__", "constructor", "\u0002tools\u001e", "😀"),
);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, -1, 0.5, 2 ** 53, 1e308));
const json = fc.jsonValue({ maxDepth: 3 });
const anything = fc.oneof(weird, number, json, fc.constant(undefined));
/** Usually `likely` (so most requests get past the first check), else `other`. */
function mostly<T>(likely: fc.Arbitrary<T>, other: fc.Arbitrary<unknown> = anything) {
  return fc.oneof({ weight: 5, arbitrary: likely }, { weight: 1, arbitrary: other });
}
/** Almost always `likely`: for the fields every request has, so many requests are routed. */
function rarely<T>(likely: fc.Arbitrary<T>, other: fc.Arbitrary<unknown> = anything) {
  return fc.oneof({ weight: 30, arbitrary: likely }, { weight: 1, arbitrary: other });
}

const source = mostly(
  fc.record({ type: mostly(fc.constantFrom("base64", "url", "file")), data: weird, url: weird }),
);
const leafBlock = fc.record(
  {
    type: mostly(
      fc.constantFrom("text", "image", "document", "tool_use", "thinking", "redacted_thinking"),
      fc.oneof(weird, anything),
    ),
    text: mostly(weird),
    source,
    id: mostly(weird),
    name: mostly(weird),
    input: mostly(fc.dictionary(printable(8), json, { maxKeys: 3 })),
    thinking: mostly(weird),
    signature: mostly(weird),
    data: mostly(weird),
    cache_control: mostly(fc.record({ type: fc.constant("ephemeral") })),
  },
  { requiredKeys: [] },
);
const toolResult = fc.record(
  {
    type: fc.constant("tool_result"),
    tool_use_id: mostly(weird),
    content: mostly(fc.oneof(weird, fc.array(mostly(leafBlock), { maxLength: 3 }))),
    is_error: mostly(fc.boolean()),
  },
  { requiredKeys: ["type"] },
);
/** Blocks as clients write them, each type with its fields: most bodies reach the origin. */
const wellFormedBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: weird }),
  fc.record({
    type: fc.constant("image"),
    source: fc.record({ type: fc.constant("base64"), media_type: weird, data: weird }),
  }),
  fc.record({
    type: fc.constant("tool_use"),
    id: weird,
    name: printable(20),
    input: fc.dictionary(printable(8), json, { maxKeys: 3 }),
  }),
  fc.record({
    type: fc.constant("tool_result"),
    tool_use_id: weird,
    content: fc.oneof(weird, fc.array(fc.record({ type: fc.constant("text"), text: weird }))),
  }),
  fc.record({ type: fc.constant("thinking"), thinking: weird, signature: weird }),
);
const block = fc.oneof(
  { weight: 12, arbitrary: wellFormedBlock },
  { weight: 3, arbitrary: leafBlock },
  { weight: 1, arbitrary: toolResult },
  { weight: 1, arbitrary: anything },
);
const message = rarely(
  fc.record(
    {
      role: rarely(fc.constantFrom("user", "assistant"), fc.constantFrom("system", "tool", "")),
      content: rarely(fc.oneof(weird, fc.array(block, { maxLength: 4 }))),
    },
    { requiredKeys: ["role", "content"] },
  ),
);
const tool = rarely(
  fc.record(
    {
      name: rarely(printable(20).filter((name) => name !== "")),
      description: mostly(weird),
      input_schema: mostly(fc.record({ type: fc.constant("object") })),
      cache_control: mostly(fc.record({ type: fc.constant("ephemeral") })),
    },
    { requiredKeys: [] },
  ),
);
/** Huge tool lists: the same small tool some thousands of times. */
const hugeTools = fc
  .integer({ min: 500, max: 5000 })
  .map((n) =>
    Array.from({ length: n }, (_, i) => ({ name: `t${i}`, input_schema: { type: "object" } })),
  );
const system = mostly(
  fc.oneof(
    weird,
    fc.array(mostly(fc.record({ type: fc.constant("text"), text: weird })), { maxLength: 3 }),
  ),
);
const hostileBody = fc.record(
  {
    model: rarely(fc.constant(MODEL)),
    max_tokens: rarely(fc.integer({ min: 1, max: 4096 }), number),
    messages: rarely(fc.array(message, { minLength: 1, maxLength: 5 })),
    system,
    tools: mostly(
      fc.oneof(
        { weight: 4, arbitrary: fc.array(tool, { maxLength: 4 }) },
        { weight: 1, arbitrary: hugeTools },
      ),
    ),
    stream: mostly(fc.boolean()),
    metadata: mostly(json),
  },
  { requiredKeys: ["model", "messages"] },
);
/** A body as a client writes it (any text, every block well formed): it reaches the origin. */
const cleanBody = fc.record(
  {
    model: fc.constant(MODEL),
    max_tokens: fc.integer({ min: 1, max: 4096 }),
    messages: fc.array(
      fc.record({
        role: fc.constantFrom("user", "assistant"),
        content: fc.oneof(weird, fc.array(wellFormedBlock, { maxLength: 4 })),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    system: fc.oneof(weird, fc.array(fc.record({ type: fc.constant("text"), text: weird }))),
    tools: fc.oneof(
      { weight: 4, arbitrary: fc.array(tool, { maxLength: 4 }) },
      { weight: 1, arbitrary: hugeTools },
    ),
    stream: fc.boolean(),
  },
  { requiredKeys: ["model", "max_tokens", "messages"] },
);
const messagesBody = fc.oneof(cleanBody, hostileBody);

const nest = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
/** Raw fields no generator of values produces: prototype keys, nesting, bulk. */
const hostileField = fc.oneof(
  fc.constantFrom(
    '"__proto__":{"model":"other"}',
    '"constructor":{"prototype":{"model":1}}',
    '"max_tokens":1e999',
    '"kv_transfer_params":{"remote_host":"10.0.0.1"}',
    '"x":"\\ud800\\u0000\\u001e"',
  ),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `"tools":[${nest(depth)}]`),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `"system":${nest(depth)}`),
  fc.integer({ min: 1, max: 200_000 }).map((n) => `"x":[${"[],".repeat(n)}[]]`),
);
const withField = (text: string, field: string) =>
  text.startsWith("{") ? `{${field}${text === "{}" ? "" : ","}${text.slice(1)}` : text;
const body = fc.oneof(
  { weight: 5, arbitrary: messagesBody.map((v) => JSON.stringify(v)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(messagesBody, hostileField)
      .map(([v, field]) => withField(JSON.stringify(v), field)),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(messagesBody, fc.nat(), printable(3)).map(([v, at, junk]) => {
      const text = JSON.stringify(v);
      const cut = at % (text.length + 1);
      return text.slice(0, cut) + junk + text.slice(cut + (at % 3));
    }),
  },
  { weight: 1, arbitrary: json.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
);
const headers = fc.array(
  fc.tuple(
    fc.constantFrom(
      "content-type",
      "anthropic-version",
      "anthropic-beta",
      "x-api-key",
      "authorization",
      "x-router-priority",
      "x-router-session",
      "connection",
      "expect",
    ),
    fc.oneof(
      printable(60),
      fc.constantFrom(
        "application/json",
        "2023-06-01",
        "close, x-api-key",
        "batch",
        "100-continue",
      ),
    ),
  ),
  { maxLength: 4 },
);
const path = fc.oneof(
  { weight: 6, arbitrary: fc.constant("/v1/messages") },
  { weight: 2, arbitrary: fc.constant("/v1/messages/count_tokens") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "/v1/messages?beta=true",
      "/v1/messages/",
      "/v1/messages/batches",
      "/v1/messages/count_tokens/",
      "/v1//messages",
    ),
  },
);
const method = mostly(
  fc.constant("POST"),
  fc.constantFrom("GET", "PUT", "DELETE", "PATCH"),
) as fc.Arbitrary<string>;

// ---- checks ------------------------------------------------------------------------------

async function expectSafe(res: Response, req: Hostile): Promise<void> {
  const text = await res.text();
  const what = `${req.method} ${req.path} -> ${res.status} ${text.slice(0, 300)}`;
  expect(res.status, what).toBeLessThan(500);
  for (const secret of SECRETS) expect(text.includes(secret), what).toBe(false);
  // An origin's own answer is passed through as it is (docs/api.md).
  if (res.status < 400 || res.headers.has("x-router-origin")) return;
  // Routes outside /v1/messages* (`//messages`) answer in OpenAI's shape, as every other path.
  const anthropic = req.path.startsWith("/v1/messages");
  let parsed: unknown;
  expect(() => {
    parsed = JSON.parse(text);
  }, what).not.toThrow();
  if (!anthropic) {
    expect(Object.keys(parsed as object), what).toEqual(["error"]);
    return;
  }
  const error = parsed as { type: unknown; error: Record<string, unknown>; request_id: unknown };
  expect(Object.keys(error).sort(), what).toEqual(["error", "request_id", "type"]);
  expect(error.type, what).toBe("error");
  expect(Object.keys(error.error).sort(), what).toEqual(["message", "type"]);
  expect(typeof error.error.message, what).toBe("string");
  expect(ERROR_TYPES, what).toContain(error.error.type);
}

async function expectStillRoutes(): Promise<void> {
  const res = await messages({ model: MODEL, messages: [{ role: "user", content: "still?" }] });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("x-router-origin")).toBe(ROUTED_BY);
  await res.text();
}

describe("fuzz: /v1/messages never answers a 5xx or an error outside Anthropic's shape", () => {
  it("400 hostile Messages requests: malformed blocks, wrong types, huge tool lists", async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.record({ method, path, headers, body }), async (req) => {
        const res = send(req);
        fc.pre(res !== undefined);
        await expectSafe(await (res as Promise<Response>), req);
        if (++cases % CHECK_EVERY === 0) await expectStillRoutes();
      }),
      { numRuns: 400 },
    );
    await expectStillRoutes();
  }, 120_000);
});
