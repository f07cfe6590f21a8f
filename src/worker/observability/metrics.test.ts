/// <reference path="../../../tools/types/parse-prometheus-text-format.d.ts" />
import { env } from "cloudflare:workers";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RouterObject } from "../objects/router-object.ts";
import { CACHED_TOKENS } from "../test/fixture.ts";
import {
  call,
  chat,
  conversation,
  drain,
  hits,
  messages,
  origin,
  originBase,
  pool,
  putSettings,
  waitFor,
} from "../test/helpers.ts";

const MODEL = "metrics-model";
const FAILOVER = "metrics-failover";
const FALLBACK = "metrics-fallback";
const BYTES = "metrics-bytes";
const ADMIT = "metrics-admission";
const ADMIT_EDGE = "metrics-admission-edge";

/**
 * One origin that prefills 1 token/s and holds its answers until released: once it serves a
 * request, every other waits in admission (maxWaitMs 0), which has `maxQueued` places.
 */
const held = (id: string, maxQueued: number, extra: Record<string, unknown> = {}) =>
  pool([origin(id, "hold")], {
    prefillTokensPerSecond: 1,
    admission: { maxWaitMs: 0, queueTimeoutMs: 30_000, maxQueued },
    ...extra,
  });

beforeAll(async () => {
  await putSettings({
    pools: {
      [MODEL]: pool([origin("mx-1"), origin("mx-2")], {
        policy: { type: "cost" },
        shadowPolicies: [{ type: "cache-aware" }, { type: "llm-d" }],
      }),
      [FAILOVER]: pool([origin("mf-bad", "fail500"), origin("mf-ok")], {
        policy: { type: "round-robin" },
        retry: { maxAttempts: 2, backoffMs: 0 },
      }),
      [FALLBACK]: pool([origin("mb-1")]),
      [BYTES]: pool([origin("mt-1")]),
      [ADMIT]: held("ma-h", 1),
      [ADMIT_EDGE]: held("ma-e", 0, { coordination: "edge", edge: { flushMs: 10, warmMs: 0 } }),
    },
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function scrape(token = env.METRICS_TOKEN): Promise<Response> {
  return call("/metrics", token ? { headers: { authorization: `Bearer ${token}` } } : {});
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The scrape's samples, one per line. The text is first checked with the real parser (it throws
 * on any malformed line); its output is not used for values because it merges histograms that
 * carry labels besides `le` into one.
 */
async function metrics(): Promise<Sample[]> {
  const res = await scrape();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  parsePrometheusTextFormat(text);
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`unexpected line ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (match[2] ?? "").matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) {
        labels[k as string] = v as string;
      }
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** Sum of the samples named `name` whose labels include `labels`. */
function sum(samples: Sample[], name: string, labels: Record<string, string>): number {
  return samples
    .filter((m) => m.name === name)
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v))
    .reduce((total, m) => total + m.value, 0);
}

async function send(model: string, messages: unknown[], stream = true): Promise<Response> {
  const res = await chat(model, messages, { stream });
  await res.text();
  return res;
}

describe("GET /metrics", () => {
  it("needs METRICS_TOKEN or ADMIN_TOKEN", async () => {
    expect((await scrape("")).status).toBe(401);
    expect((await scrape("wrong")).status).toBe(401);
    expect((await scrape(env.METRICS_TOKEN)).status).toBe(200);
    expect((await scrape(env.ADMIN_TOKEN)).status).toBe(200);
  });

  it("is valid exposition following the naming conventions", async () => {
    await send(MODEL, conversation("exposition", 0));
    const res = await scrape();
    const text = await res.text();
    const families = parsePrometheusTextFormat(text);
    const names = families.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    for (const f of families) {
      expect(f.name).toMatch(/^llm_router_[a-z_]+$/);
      expect(f.help.length).toBeGreaterThan(0);
      if (f.type === "COUNTER") expect(f.name).toMatch(/_total$/);
      else expect(f.name).not.toMatch(/_total$/);
      if (f.type === "HISTOGRAM") expect(f.name).toMatch(/_seconds$/);
    }
    // Histogram buckets are cumulative, and +Inf equals the count.
    const samples = await metrics();
    for (const name of ["ttfb", "route_object"]) {
      const family = `llm_router_${name}_seconds`;
      const buckets = samples.filter(
        (m) => m.name === `${family}_bucket` && m.labels.model === MODEL,
      );
      const counts = buckets.map((m) => m.value);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(buckets.at(-1)?.labels.le).toBe("+Inf");
      expect(buckets.at(-1)?.value).toBe(sum(samples, `${family}_count`, { model: MODEL }));
    }
    // Every family is declared on every scrape, with HELP and TYPE before its samples.
    expect(text).toMatch(
      /# HELP llm_router_failovers_total .+\n# TYPE llm_router_failovers_total counter\n/,
    );
  });

  it("counts requests, tokens, decisions, shadows and latency per pool and origin", async () => {
    const before = await metrics();
    const base = (name: string, labels: Record<string, string> = {}) =>
      sum(before, name, { model: MODEL, ...labels });
    const counted = {
      requests: base("llm_router_requests_total", { outcome: "ok" }),
      decisions: base("llm_router_decisions_total"),
      shadow: base("llm_router_shadow_decisions_total", { policy: "llm-d" }),
      ttfb: base("llm_router_ttfb_seconds_count"),
    };
    for (let turns = 0; turns < 3; turns++) await send(MODEL, conversation("counts", turns));
    let after = await metrics();
    await waitFor(
      async () => {
        after = await metrics();
        return sum(after, "llm_router_requests_total", { model: MODEL }) >= counted.requests + 3;
      },
      5000,
      "completions to reach the object",
    );
    const m = (name: string, labels: Record<string, string> = {}) =>
      sum(after, name, { model: MODEL, ...labels });
    expect(m("llm_router_requests_total", { outcome: "ok" })).toBe(counted.requests + 3);
    expect(m("llm_router_decisions_total", { policy: "cost" })).toBe(counted.decisions + 3);
    expect(m("llm_router_shadow_decisions_total", { policy: "llm-d" })).toBe(counted.shadow + 3);
    expect(m("llm_router_shadow_decisions_total", { policy: "cache-aware" })).toBe(
      counted.shadow + 3,
    );
    expect(m("llm_router_ttfb_seconds_count")).toBe(counted.ttfb + 3);
    // The object routed every request of this pool, so each has a round trip.
    expect(m("llm_router_route_object_seconds_count")).toBe(m("llm_router_requests_total"));
    const reports = m("llm_router_usage_reports_total");
    expect(m("llm_router_cached_tokens_total")).toBe(reports * CACHED_TOKENS);
    expect(m("llm_router_prompt_tokens_total")).toBeGreaterThan(
      m("llm_router_cached_tokens_total"),
    );
    expect(m("llm_router_pool_object_up")).toBe(1);
    for (const id of ["mx-1", "mx-2"]) {
      expect(m("llm_router_origin_health", { origin: id, state: "up" })).toBe(1);
      expect(m("llm_router_origin_health", { origin: id, state: "down" })).toBe(0);
      expect(m("llm_router_circuit_state", { origin: id, state: "closed" })).toBe(1);
      expect(m("llm_router_outstanding_requests", { origin: id })).toBe(0);
      // Too few requests to learn from: routing reads the prior, and says so.
      const speed = (source: string) =>
        m("llm_router_origin_prefill_tokens_per_second", { origin: id, source });
      expect(speed("prior")).toBeGreaterThan(0);
      expect(speed("learned")).toBe(speed("prior"));
      expect(m("llm_router_origin_prefill_samples", { origin: id })).toBe(0);
    }
    expect(m("llm_router_pool_bytes_per_token")).toBeGreaterThan(0);
    expect(m("llm_router_index_chunks")).toBeGreaterThan(0);
    expect(m("llm_router_routed_total")).toBe(m("llm_router_decisions_total"));
  });

  it("counts requests by api (chat and messages apart), each shadow-evaluated alike", async () => {
    const count = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
      sum(samples, name, { model: MODEL, ...labels });
    const before = await metrics();
    const api = (samples: Sample[], name: string) =>
      count(samples, "llm_router_api_requests_total", { api: name, outcome: "ok" });
    for (let k = 0; k < 2; k++) {
      await send(MODEL, conversation(`apis-${k}`, 1));
      const res = await messages({
        model: MODEL,
        messages: [{ role: "user", content: `api ${k}` }],
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    let after = before;
    await waitFor(
      async () => {
        after = await metrics();
        return api(after, "messages") >= api(before, "messages") + 2;
      },
      5000,
      "the messages completions to reach the object",
    );
    expect(api(after, "chat")).toBe(api(before, "chat") + 2);
    expect(api(after, "messages")).toBe(api(before, "messages") + 2);
    const shadow = (samples: Sample[]) =>
      count(samples, "llm_router_shadow_decisions_total", { policy: "llm-d" });
    expect(shadow(after)).toBe(shadow(before) + 4);
  });

  it("shows the pool's bytes per token, learned from the engine's prompt_tokens against the bytes the Worker hashed", async () => {
    const ratio = async () =>
      sum(await metrics(), "llm_router_pool_bytes_per_token", { model: BYTES });
    expect(await ratio()).toBe(4);
    // The test origin counts a token per 4 bytes of the whole body, JSON around the prompt
    // included: a little fewer canonical bytes per token than 4.
    const res = await send(BYTES, [{ role: "user", content: "tokens ".repeat(400) }]);
    expect(res.status).toBe(200);
    await waitFor(async () => (await ratio()) < 4, 5000, "a learned bytes per token");
    expect(await ratio()).toBeGreaterThan(3.5);
  });

  it("counts failovers by origin and kind", async () => {
    for (let k = 0; k < 4; k++) {
      const res = await send(FAILOVER, [{ role: "user", content: `failover ${k}` }], false);
      expect(res.status).toBe(200);
    }
    const tried = await hits("mf-bad");
    expect(tried).toBeGreaterThan(0);
    await waitFor(
      async () =>
        sum(await metrics(), "llm_router_requests_total", { model: FAILOVER, outcome: "ok" }) === 4,
      5000,
      "failover completions",
    );
    const after = await metrics();
    const labels = { model: FAILOVER, origin: "mf-bad", kind: "status-5xx" };
    expect(sum(after, "llm_router_failovers_total", labels)).toBe(tried);
    expect(sum(after, "llm_router_origin_failures_total", { model: FAILOVER })).toBe(tried);
  });

  it("counts fallbacks, delivered with the pool's next completion", async () => {
    const route = vi.spyOn(RouterObject.prototype, "route").mockImplementation(() => {
      throw new Error("object unavailable");
    });
    for (let k = 0; k < 2; k++) {
      const res = await send(FALLBACK, conversation(`outage ${k}`, 0));
      expect(res.headers.get("x-router-reason")).toBe("fallback-error");
    }
    route.mockRestore();
    await send(FALLBACK, conversation("back", 0));
    await waitFor(
      async () =>
        sum(await metrics(), "llm_router_fallbacks_total", {
          model: FALLBACK,
          reason: "fallback-error",
        }) === 2,
      5000,
      "fallbacks to be counted",
    );
    const after = await metrics();
    expect(sum(after, "llm_router_requests_total", { model: FALLBACK, outcome: "ok" })).toBe(3);
    // Only the request the object routed has an object round trip.
    expect(sum(after, "llm_router_route_object_seconds_count", { model: FALLBACK })).toBe(1);
    // Every request's own timing reached the object, the two routed alone included.
    expect(sum(after, "llm_router_ttfb_seconds_count", { model: FALLBACK })).toBe(3);
  });
});

describe("GET /metrics: admission", () => {
  const release = (id: string) => fetch(`${originBase}/_release/${id}`);

  it("object mode: the pool's object's waiting by priority, admitted, shed by priority and reason, rate", async () => {
    const at = async (name: string, labels: Record<string, string> = {}) =>
      sum(await metrics(), `llm_router_admission_${name}`, { model: ADMIT, ...labels });
    expect(await at("enabled")).toBe(1);
    const holding = await chat(ADMIT, conversation("holding", 0), { stream: true });
    expect(holding.status).toBe(200);
    const batch = chat(ADMIT, conversation("batch", 0), {
      headers: { "x-router-priority": "batch" },
    });
    await waitFor(
      async () => (await at("waiting_requests", { priority: "batch" })) === 1,
      5000,
      "the batch request to wait",
    );
    // The one place goes to an interactive request: the batch one is displaced.
    const interactive = chat(ADMIT, conversation("interactive", 0), { stream: true });
    expect((await batch).status).toBe(503);
    let samples = await metrics();
    const m = (name: string, labels: Record<string, string> = {}) =>
      sum(samples, `llm_router_admission_${name}`, { model: ADMIT, ...labels });
    expect(m("waiting_requests", { priority: "interactive" })).toBe(1);
    expect(m("waiting_requests", { priority: "batch" })).toBe(0);
    expect(m("shed_total", { priority: "batch", reason: "displaced" })).toBe(1);
    expect(m("shed_total")).toBe(1);
    expect(m("admitted_total", { when: "at-once" })).toBe(1);
    expect(m("admitted_total", { when: "after-wait" })).toBe(0);
    expect(m("left_total")).toBe(0);
    // Admissions over the last 10 s: shown, whatever this machine's pace made of the window.
    const rate = samples.filter(
      (s) => s.name === "llm_router_admission_rate_per_second" && s.labels.model === ADMIT,
    );
    expect(rate).toHaveLength(1);
    expect(rate[0]?.value).toBeGreaterThanOrEqual(0);
    await release("ma-h");
    await drain(holding);
    const res = await interactive;
    expect(res.status).toBe(200);
    await release("ma-h");
    await drain(res);
    samples = await metrics();
    expect(m("admitted_total", { when: "after-wait" })).toBe(1);
    expect(m("waiting_requests")).toBe(0);
  });

  it("edge mode: this isolate's admission, under its id", async () => {
    const holding = await chat(ADMIT_EDGE, conversation("holding", 0), { stream: true });
    expect(holding.status).toBe(200);
    const shed = await chat(ADMIT_EDGE, conversation("shed", 0));
    expect(shed.status).toBe(503);
    await drain(shed);
    const samples = (await metrics()).filter(
      (s) => s.name.startsWith("llm_router_admission_") && s.labels.model === ADMIT_EDGE,
    );
    const isolates = new Set(samples.map((s) => s.labels.isolate));
    expect(isolates.size).toBe(1);
    expect([...isolates][0]).toMatch(/^[\w-]{22}$/);
    const m = (name: string, labels: Record<string, string> = {}) =>
      sum(samples, `llm_router_admission_${name}`, labels);
    expect(m("enabled")).toBe(1);
    expect(m("shed_total", { priority: "interactive", reason: "queue-full" })).toBe(1);
    expect(m("admitted_total", { when: "at-once" })).toBe(1);
    await release("ma-e");
    await drain(holding);
  });
});

describe("GET /admin/state", () => {
  it("shows the pool's metrics, time series, hot prefixes and shadow figures", async () => {
    await send(MODEL, conversation("state", 0));
    const res = await call(`/admin/state?model=${MODEL}`, {
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    const state = (await res.json()) as {
      object: {
        metrics: {
          origins: Record<string, { requests: Record<string, number> }>;
          series: { bucketMs: number; points: { requests: number; hitRate: number | null }[] };
        };
        router: {
          hotPrefixes: { tokens: number; origins: string[] }[];
          shadows: { policy: string; decisions: number }[];
        };
      };
    };
    const { metrics: m, router } = state.object;
    expect(Object.keys(m.origins).sort()).toEqual(["mx-1", "mx-2"]);
    expect(m.series.points).toHaveLength(60);
    const recent = m.series.points.at(-1) ?? m.series.points[0];
    expect(m.series.points.some((p) => p.requests > 0)).toBe(true);
    expect(recent).toHaveProperty("hitRate");
    expect(router.hotPrefixes.length).toBeGreaterThan(0);
    expect(router.hotPrefixes[0]?.origins.length).toBeGreaterThan(0);
    expect(router.shadows.map((s) => s.policy)).toEqual(["cache-aware", "llm-d"]);
  });
});
