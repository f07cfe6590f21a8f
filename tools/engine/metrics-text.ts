/**
 * `/metrics` in vLLM's Prometheus names (vllm/v1/metrics/loggers.py), so the same reporter that
 * watches a real vLLM server watches the simulator.
 */
import type { LiveEngine } from "./live-engine.ts";

export function metricsText(live: LiveEngine, model: string, blockTokens: number): string {
  const e = live.engine;
  const labels = `engine="0",model_name="${model}"`;
  const lines = [
    "# HELP vllm:num_requests_running Number of requests in model execution batches.",
    "# TYPE vllm:num_requests_running gauge",
    `vllm:num_requests_running{${labels}} ${e.running}`,
    "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
    "# TYPE vllm:num_requests_waiting gauge",
    `vllm:num_requests_waiting{${labels}} ${e.waiting}`,
    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
    "# TYPE vllm:kv_cache_usage_perc gauge",
    `vllm:kv_cache_usage_perc{${labels}} ${e.kvUsage}`,
    "# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.",
    "# TYPE vllm:prefix_cache_queries counter",
    `vllm:prefix_cache_queries_total{${labels}} ${live.counters.queriedTokens}`,
    "# HELP vllm:prefix_cache_hits Prefix cache hits, in terms of number of cached tokens.",
    "# TYPE vllm:prefix_cache_hits counter",
    `vllm:prefix_cache_hits_total{${labels}} ${live.counters.hitTokens}`,
    "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
    "# TYPE vllm:cache_config_info gauge",
    `vllm:cache_config_info{block_size="${blockTokens}",enable_prefix_caching="True",${labels},num_gpu_blocks="${e.cache.total}"} 1.0`,
  ];
  return `${lines.join("\n")}\n`;
}
