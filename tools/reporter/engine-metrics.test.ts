import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readEngineMetrics } from "./engine-metrics.ts";

const fixture = (name: string) =>
  readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8");

describe("readEngineMetrics", () => {
  it("reads vLLM's names, summing DP engines and averaging KV usage", () => {
    expect(readEngineMetrics(fixture("vllm-metrics.txt"), "vllm")).toEqual({
      running: 7,
      waiting: 2,
      kvUsage: 0.375,
      kvCapacityTokens: 2 * 16 * 29000,
      lifeCounter: 200000,
      prefill: null,
    });
  });

  it("reads SGLang's names", () => {
    expect(readEngineMetrics(fixture("sglang-metrics.txt"), "sglang")).toEqual({
      running: 8,
      waiting: 1,
      kvUsage: 0.3,
      kvCapacityTokens: 450000,
      lifeCounter: 1000,
      prefill: null,
    });
  });

  it("reads llama.cpp's names (a real scrape: two requests prefilling, one deferred)", () => {
    expect(readEngineMetrics(fixture("llamacpp-metrics.txt"), "llamacpp")).toEqual({
      running: 2,
      waiting: 1,
      kvUsage: 0,
      kvCapacityTokens: null,
      lifeCounter: 17,
      prefill: { tokens: 2956, seconds: 20.068 },
    });
  });

  it("accepts vLLM's deprecated gpu_cache_usage_perc", () => {
    const old = fixture("vllm-metrics.txt").replaceAll(
      "vllm:kv_cache_usage_perc",
      "vllm:gpu_cache_usage_perc",
    );
    expect(readEngineMetrics(old, "vllm").kvUsage).toBe(0.375);
  });

  it("rejects text of the other engine, or no load metrics at all", () => {
    expect(() => readEngineMetrics(fixture("sglang-metrics.txt"), "vllm")).toThrow(
      /vllm:num_requests_running/,
    );
    expect(() => readEngineMetrics("# nothing here\n", "sglang")).toThrow(
      /sglang:num_running_reqs/,
    );
  });
});
