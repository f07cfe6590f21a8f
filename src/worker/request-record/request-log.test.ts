import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CACHED_TOKENS } from "../test/fixture.ts";
import { call, chat, origin, pool, putSettings, waitFor } from "../test/helpers.ts";
import type { RequestLogLine } from "./request-record.ts";

const MODEL = "log-model";
const FAILING = "log-failing-model";
const SECRET_PROMPT = "the launch code is 0000-SECRET-PROMPT";

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool([origin("lg-a", "ok", { apiKeySecret: "TEST_ORIGIN_KEY" })], {
        policy: { type: "cost" },
      }),
      [FAILING]: pool([origin("lg-bad", "fail500"), origin("lg-ok")], {
        policy: { type: "round-robin" },
        retry: { maxAttempts: 2, backoffMs: 0 },
      }),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every JSON request line logged while `run` goes, once `count` have been written. */
async function captured(count: number, run: () => Promise<void>): Promise<RequestLogLine[]> {
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.includes('"msg":"llm_request"')) lines.push(line);
  });
  await run();
  await waitFor(() => lines.length >= count, 5000, `${count} log lines`);
  log.mockRestore();
  return lines.map((line) => JSON.parse(line) as RequestLogLine);
}

describe("request log", () => {
  it("one JSON line per streamed request, with routing, usage and timing, no prompt or secret", async () => {
    let requestId = "";
    const raw: string[] = [];
    const lines = await captured(1, async () => {
      const res = await chat(MODEL, [{ role: "user", content: SECRET_PROMPT }], {
        stream: true,
        headers: { "x-request-id": "log-test-1", authorization: "Bearer client-key" },
      });
      requestId = res.headers.get("x-request-id") ?? "";
      await res.text();
    });
    expect(requestId).toBe("log-test-1");
    expect(lines).toHaveLength(1);
    const line = lines[0] as RequestLogLine;
    expect(line).toMatchObject({
      msg: "llm_request",
      requestId: "log-test-1",
      model: MODEL,
      status: 200,
      outcome: "ok",
      origin: "lg-a",
      policy: "cost",
      fallback: false,
      cachedTokens: CACHED_TOKENS,
      attempts: 1,
      failovers: 0,
      failures: [],
      error: null,
    });
    expect(line.reason).toEqual(expect.any(String));
    expect(line.promptTokens).toBeGreaterThan(0);
    expect(line.ttfbMs).toBeGreaterThanOrEqual(0);
    expect(line.objectMs).toBeGreaterThanOrEqual(0);
    raw.push(JSON.stringify(line));
    for (const secret of [
      SECRET_PROMPT,
      "SECRET",
      env.ADMIN_TOKEN,
      "sk-origin-secret",
      "client-key",
      "http",
    ]) {
      expect(raw[0]).not.toContain(secret);
    }
  });

  it("failovers and their kinds are on the line", async () => {
    const lines = await captured(2, async () => {
      for (let k = 0; k < 2; k++) {
        const res = await chat(FAILING, [{ role: "user", content: `fail ${k}` }]);
        expect(res.status).toBe(200);
        await res.text();
      }
    });
    const moved = lines.find((l) => l.failovers === 1);
    expect(moved).toMatchObject({
      origin: "lg-ok",
      attempts: 2,
      failures: [{ origin: "lg-bad", kind: "status-5xx" }],
      outcome: "ok",
    });
  });

  it("requests the router answers itself are logged as rejected, with the error code", async () => {
    const lines = await captured(2, async () => {
      await (await chat("no-such-model", [{ role: "user", content: SECRET_PROMPT }])).text();
      const bad = await call("/v1/chat/completions", { method: "POST", body: "{" });
      await bad.text();
    });
    expect(lines.map((l) => [l.status, l.outcome, l.error, l.model])).toEqual([
      [404, "rejected", "model_not_found", "no-such-model"],
      [400, "rejected", "invalid_json", null],
    ]);
    expect(JSON.stringify(lines)).not.toContain("SECRET");
  });

  it("no line for other routes", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => lines.push(String(line)));
    await (await call("/v1/models")).text();
    await (await call("/healthz")).text();
    expect(lines.filter((l) => l.includes("llm_request"))).toEqual([]);
  });
});
