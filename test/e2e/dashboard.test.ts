/**
 * End to end: the local stack (wrangler dev with the real Worker and Durable Object, simulated
 * engines, a reporter each posting signed load webhooks) observed the way an operator would:
 * `/metrics` read by a Prometheus parser in Node, and `/dashboard` in headless Chromium (Debian's
 * `chromium` with playwright-core; never a downloaded browser). The browser part is skipped,
 * saying why, when /usr/bin/chromium is absent; `.ci/run` installs it. Writes
 * test-artifacts/dashboard.png.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { e2eDir, startE2eStack } from "./e2e-stack.ts";

const root = resolve(import.meta.dirname, "../..");
const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const SCREENSHOT = join(root, "test-artifacts", "dashboard.png");
const MODEL = "dash-model";
const ORIGINS = ["gpu-a", "gpu-b", "gpu-c"];
const WAIT_MS = 10_000;

const dir = e2eDir("router-dashboard-e2e-");
let stack: Stack | undefined;
let browser: Browser | undefined;

if (!hasChromium) {
  console.warn(
    `dashboard browser test skipped: ${CHROMIUM} not found (Debian: apt-get install chromium)`,
  );
}

/** Resolves to `promise`, or rejects after `ms` so no cleanup step can hang the suite. */
function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: timeout`)), ms)),
  ]);
}

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${stack?.routerUrl}${path}`, { ...init, signal: AbortSignal.timeout(WAIT_MS) });
}

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${stack?.secrets.ADMIN_TOKEN}`);
  return call(path, { ...init, headers });
}

/** A conversation with a long system prompt shared by every turn of `topic`. */
function conversation(topic: string, turns: number) {
  const messages = [{ role: "system", content: `You answer questions on ${topic}. `.repeat(60) }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: `question ${t} on ${topic}` });
    messages.push({ role: "assistant", content: `answer ${t} on ${topic}` });
  }
  messages.push({ role: "user", content: `next question on ${topic}` });
  return messages;
}

async function chat(topic: string, turns: number): Promise<void> {
  const res = await call("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      messages: conversation(topic, turns),
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

beforeAll(async () => {
  stack = await bounded(
    startE2eStack(dir, {
      origins: ORIGINS.length,
    }),
    45_000,
    "local stack",
  );
  const settings = {
    pools: {
      [MODEL]: {
        origins: stack.originSettings(),
        access: "open",
        policy: { type: "cost" },
        shadowPolicies: [{ type: "cache-aware" }, { type: "round-robin" }],
      },
    },
  };
  const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(settings) });
  expect(res.status).toBe(200);
  if (hasChromium) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      timeout: 15_000,
    });
  }
});

afterAll(async () => {
  // Every step runs, bounded, even when an earlier one failed.
  const steps: [string, (() => Promise<void>) | undefined][] = [
    ["browser", browser && (() => browser?.close() ?? Promise.resolve())],
    ["local stack", stack && (() => stack?.stop() ?? Promise.resolve())],
  ];
  for (const [what, step] of steps) {
    if (step) await bounded(step(), 15_000, what).catch((error) => console.warn(String(error)));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /metrics on the running Worker", () => {
  it("parses as Prometheus text, and docs/api.md lists every family", async () => {
    await chat("metrics", 0);
    const res = await call("/metrics", {
      headers: { authorization: `Bearer ${stack?.secrets.ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const families = parsePrometheusTextFormat(await res.text());
    const names = families.map((f) => f.name);
    expect(names).toContain("llm_router_requests_total");
    expect(names).toContain("llm_router_route_object_seconds");
    expect(names).toContain("llm_router_shadow_agreements_total");
    const up = families.find((f) => f.name === "llm_router_pool_object_up");
    expect(up?.metrics).toEqual([{ labels: { model: MODEL }, value: "1" }]);
    const docs = readFileSync(join(root, "docs/api.md"), "utf8");
    expect(names.filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
  });
});

describe.skipIf(!hasChromium)("the dashboard in headless Chromium", () => {
  it("signs in, shows one card per origin, updates after traffic; screenshot", async () => {
    const page = await (browser as Browser).newPage({ viewport: { width: 1360, height: 1000 } });
    page.setDefaultTimeout(WAIT_MS);
    const external: string[] = [];
    page.on("request", (req) => {
      if (!req.url().startsWith(stack?.routerUrl ?? "-")) external.push(req.url());
    });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));

    await page.goto(`${stack?.routerUrl}/dashboard?interval=300`);
    await page.locator("#token").waitFor({ state: "visible" });
    await page.fill("#token", "not-the-token");
    await page.click("#login-form button[type=submit]");
    await page.locator("#login-error", { hasText: "refused" }).waitFor();

    await page.fill("#token", stack?.secrets.ADMIN_TOKEN ?? "");
    await page.click("#login-form button[type=submit]");
    const cards = page.locator(".origin-card");
    await cards.first().waitFor();
    expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute("data-origin")))).toEqual(
      ORIGINS,
    );
    const routed = () =>
      cards.evaluateAll((els) =>
        els.reduce((n, e) => n + Number(e.getAttribute("data-routed")), 0),
      );
    const before = await routed();

    // Traffic: conversations that grow turn by turn, so later turns hit the cache. The engines'
    // reporters post their load meanwhile.
    for (let turns = 0; turns < 4; turns++) {
      await Promise.all(["billing", "shipping", "returns"].map((topic) => chat(topic, turns)));
    }

    await page.waitForFunction(
      (n) =>
        [...document.querySelectorAll(".origin-card")].reduce(
          (sum, e) => sum + Number(e.getAttribute("data-routed")),
          0,
        ) >= n,
      before + 12,
    );
    expect(await routed()).toBeGreaterThanOrEqual(before + 12);
    // Engine reports reach the cards; hit rate, hot prefixes, shadows and decisions are drawn.
    await page.locator(".origin-card", { hasText: "KV cache (engine)" }).first().waitFor();
    await page.locator("#chart-hit path.series").first().waitFor({ state: "attached" });
    await page.locator("#hot tbody tr td code").first().waitFor();
    expect(await page.locator("#shadows tbody tr").count()).toBe(2);
    expect(await page.locator("#recent tbody tr").count()).toBeGreaterThan(5);
    await page
      .locator(".tile", { hasText: "Hit rate" })
      .getByText(/\d+\.\d%/)
      .first()
      .waitFor();

    mkdirSync(join(root, "test-artifacts"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(errors).toEqual([]);
    expect(external).toEqual([]);
    await page.close();
  });
});
