import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { POLICY_TYPES } from "../../src/core/policies/index.ts";
import { toJson } from "../report/write.ts";
import { type BenchSpec, runBenchmark, runPolicy, workloadOf } from "./runner.ts";
import { conversationSpec } from "./test-spec.ts";

/** The first 48 requests of the bundled conversation trace: tens of requests, end to end. */
const TINY = conversationSpec({ limit: 48, arrivals: "spread", load: 0.8, origins: 4 });

const AZURE_CONVERSATION = fileURLToPath(
  new URL("../../bench/traces/AzureLLMInferenceTrace_conv.csv", import.meta.url),
);
const NOW = { threads: 0 };

describe("fleet simulation", () => {
  it("replays a tiny trace end to end for every policy", async () => {
    const result = await runBenchmark(TINY, POLICY_TYPES, { threads: 0 });
    expect(result.requests).toBe(48);
    expect(result.results.map((r) => r.policy)).toEqual(POLICY_TYPES);
    expect(result.oracleHitRate).toBeGreaterThan(0);
    expect(result.fleetOracleHitRate).toBeLessThanOrEqual(result.oracleHitRate);
    for (const r of result.results) {
      expect(Object.values(r.reasons).reduce((a, b) => a + b, 0)).toBe(48);
      expect(r.perOrigin.reduce((a, o) => a + o.requests, 0)).toBe(48);
      expect(r.hitRate).toBeLessThanOrEqual(result.oracleHitRate);
      expect(r.ttftMs.p50).toBeGreaterThan(0);
      expect(r.ttftMs.p99).toBeGreaterThanOrEqual(r.ttftMs.p50);
      expect(r.e2eMs.p50).toBeGreaterThanOrEqual(r.ttftMs.p50);
      expect(r.expiredLeases).toBe(0);
      expect(r.fallbackRate).toBe(0);
    }
  });

  it("delivers load reports as each policy's information model says", async () => {
    const result = await runBenchmark(TINY, ["power-of-two", "llm-d"], { threads: 0 });
    // power-of-two polls every 5 s: its own counts before the first poll, then the engines'.
    const reasons = result.results[0]?.reasons ?? {};
    expect(reasons["two-choices-local"]).toBeGreaterThan(0);
    expect(reasons["two-choices-engine"]).toBeGreaterThan(0);
    expect(result.results.map((r) => r.information?.loadReports?.intervalMs)).toEqual([5000, 50]);
    const never = await runBenchmark({ ...TINY, engineDelayMs: 1e6 }, ["power-of-two"], {
      threads: 0,
    });
    expect(never.results[0]?.reasons["two-choices-engine"]).toBeUndefined();
  });

  it("feeds the engines' KV events to the index of the policies whose systems read them", () => {
    const w = workloadOf(TINY);
    const dynamo = runPolicy(w, TINY, "dynamo");
    expect(dynamo.information).toMatchObject({ indexFeed: "engine-events", firstToken: true });
    // The index follows the engines' caches: it predicts no more than they then report.
    const { predictedTokens, cachedTokens } = dynamo.indexAccuracy;
    expect(predictedTokens).toBeGreaterThan(0);
    expect(predictedTokens).toBeLessThanOrEqual(cachedTokens);
    const late = runPolicy(w, { ...TINY, engineDelayMs: 1e6 }, "dynamo");
    expect(late.indexAccuracy.predictedTokens).toBe(0);
  });

  it("replays cost once per prefill calibration, and the others once", async () => {
    const spec = { ...TINY, prefillCalibration: [0.7, 1, 1.3] };
    const result = await runBenchmark(spec, ["round-robin", "cost"], { threads: 0 });
    expect(result.results.map((r) => r.policy)).toEqual([
      "round-robin",
      "cost x0.7",
      "cost",
      "cost x1.3",
    ]);
    expect(result.results[1]?.information?.prefillCalibration).toBe(0.7);
  });

  it("reports the engines' cached tokens to the router as the hit rate's truth", () => {
    const w = workloadOf(TINY);
    const r = runPolicy(w, TINY, "cost");
    const prompt = w.promptTokens.reduce((a, b) => a + b, 0);
    expect(r.indexAccuracy.cachedTokens / prompt).toBeCloseTo(r.hitRate, 3);
  });

  it("gives byte-identical JSON for one seed, in this thread or in workers", async () => {
    const policies = ["round-robin", "power-of-two", "cost"] as const;
    const a = toJson(await runBenchmark(TINY, policies, { threads: 0 }));
    const b = toJson(await runBenchmark(TINY, policies, { threads: 0 }));
    const c = toJson(await runBenchmark(TINY, policies, { threads: 2 }));
    expect(b).toBe(a);
    expect(c).toBe(a);
    const other = toJson(await runBenchmark({ ...TINY, seed: 2 }, policies, { threads: 0 }));
    expect(other).not.toBe(a);
  }, 60_000);

  it("is slower for everyone when the load is higher", async () => {
    const low = await runBenchmark({ ...TINY, load: 0.2 }, ["least-outstanding"], { threads: 0 });
    const high = await runBenchmark({ ...TINY, load: 2 }, ["least-outstanding"], { threads: 0 });
    expect(high.results[0]?.ttftMs.mean).toBeGreaterThan(low.results[0]?.ttftMs.mean as number);
  });

  it("replays a P/D fleet: prefill legs on prefill origins, decodes after the KV transfer", async () => {
    const spec: BenchSpec = { ...TINY, pd: { prefill: 1, decode: 3, mode: "always" } };
    const result = await runBenchmark(spec, ["cost", "least-outstanding"], { threads: 0 });
    expect(result.pd).toEqual({ prefill: 1, decode: 3, mode: "always" });
    for (const r of result.results) {
      expect(r.pd?.reasons).toEqual({ "pd:remote": 48 });
      expect(r.pd?.remoteRate).toBe(1);
      expect(r.pd?.kvTransferMs.p50).toBeGreaterThan(1);
      const [prefill, ...decode] = r.perOrigin;
      // Requests are counted where they decode; the prefill origin did nearly all prefill,
      // the decode origins one token a request.
      expect(prefill?.requests).toBe(0);
      expect(decode.reduce((a, o) => a + o.requests, 0)).toBe(48);
      expect(decode.reduce((a, o) => a + o.prefilledTokens, 0)).toBe(48);
      expect(r.expiredLeases).toBe(0);
      expect(r.ttftMs.p50).toBeGreaterThan(0);
      expect(r.tpotMs.p50).toBeGreaterThan(0);
      expect(r.itlMs.p99).toBeGreaterThanOrEqual(r.itlMs.p50);
      // The router learned from the prefill legs' cached tokens (the hit rate's truth).
      expect(r.indexAccuracy.cachedTokens).toBeGreaterThan(0);
    }
  });

  it("keeps a P/D fleet's prefill origins idle when it never disaggregates", async () => {
    const spec: BenchSpec = { ...TINY, pd: { prefill: 1, decode: 3, mode: "never" } };
    const [r] = (await runBenchmark(spec, ["cost"], { threads: 0 })).results;
    expect(r?.pd?.reasons).toEqual({ "pd:local-cached": 48 });
    expect(r?.perOrigin[0]?.prefilledTokens).toBe(0);
    expect(r?.pd?.kvTransferMs).toEqual({ mean: 0, p50: 0, p99: 0 });
  });

  it("lets idle prefill origins serve whole requests with prefillServesWhole", async () => {
    // Azure's conversation trace: short prompts, which the rule keeps local.
    const source = { kind: "azure", path: AZURE_CONVERSATION } as const;
    const short = { ...TINY, source, trace: "AzureLLMInferenceTrace_conv.csv", load: 0.3 };
    const rule = { prefillServesWhole: true };
    const pd = { prefill: 1, decode: 3, mode: "conditional", rule } as const;
    const [off] = (await runBenchmark({ ...short, pd: { ...pd, rule: {} } }, ["cost"], NOW))
      .results;
    expect(off?.perOrigin[0]?.requests).toBe(0);
    const [r] = (await runBenchmark({ ...short, pd }, ["cost"], NOW)).results;
    const whole = r?.pd?.reasons["pd:whole-on-prefill"] ?? 0;
    expect(whole).toBeGreaterThan(0);
    // Requests count where they are served: the prefill origin served those whole.
    expect(r?.perOrigin[0]?.requests).toBe(whole);
    expect(r?.pd?.wholeOnPrefillRate).toBeCloseTo(whole / 48, 4);
    expect(r?.expiredLeases).toBe(0);
  }, 60_000);

  it("gives byte-identical JSON for a P/D fleet, in this thread or in workers", async () => {
    const spec: BenchSpec = { ...TINY, pd: { prefill: 1, decode: 3, mode: "conditional" } };
    const a = toJson(await runBenchmark(spec, ["cost", "dynamo"], { threads: 0 }));
    const b = toJson(await runBenchmark(spec, ["cost", "dynamo"], { threads: 2 }));
    expect(b).toBe(a);
  }, 60_000);

  it("runs a fleet of one kind from --fleet exactly as --origins does", async () => {
    const fleet = { ...TINY, fleet: [{ gpu: "h100", count: 4 }] };
    const a = await runBenchmark(TINY, ["cost"], NOW);
    const b = await runBenchmark(fleet, ["cost"], NOW);
    expect({ ...b, fleet: null }).toEqual(a);
  });

  it("gives each origin of a mixed fleet its own engine, and the exact prior its own speed", async () => {
    const h100 = { ...TINY, fleet: [{ gpu: "h100", count: 4 }] };
    const mixed = {
      ...TINY,
      fleet: [
        { gpu: "h100", count: 2 },
        { gpu: "l40s", count: 2 },
      ],
    };
    const w = workloadOf(TINY);
    // The same arrivals on slower GPUs: round-robin sends half of them to the L40S origins.
    const rr = (spec: BenchSpec) => runPolicy(w, spec, "round-robin").ttftMs.mean;
    expect(rr(mixed)).toBeGreaterThan(rr(h100));
    // Told each origin's own speed, cost routes differently from told the fleet's mean.
    const cost = (spec: BenchSpec) => runPolicy(w, spec, "cost").ttftMs;
    expect(cost({ ...mixed, fleetPrior: "exact" })).not.toEqual(cost(mixed));
  });

  it("long outputs from --output-scale: more tokens, the same prompts", () => {
    const w = workloadOf(TINY);
    const long = workloadOf({ ...TINY, outputScale: 4 });
    expect(long.promptTokens).toEqual(w.promptTokens);
    expect(long.outputTokens[0]).toBe(Math.round((w.outputTokens[0] as number) * 4));
  });
});
