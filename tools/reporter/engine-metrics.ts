/**
 * Reads an engine's Prometheus exposition into the numbers the router's webhooks carry.
 *
 * vLLM (vllm/v1/metrics/loggers.py): `vllm:num_requests_running`, `vllm:num_requests_waiting`,
 * `vllm:kv_cache_usage_perc` (0..1), counters `vllm:prefix_cache_queries` / `_hits` (exposed with
 * `_total`), and `vllm:cache_config_info` whose labels give `block_size` x `num_gpu_blocks` =
 * KV capacity in tokens.
 * SGLang (python/sglang/srt/metrics/collector.py): `sglang:num_running_reqs`,
 * `sglang:num_queue_reqs`, `sglang:token_usage` (0..1), `sglang:cache_hit_rate`, and
 * `sglang:cache_config_info` with `page_size` x `num_pages`.
 * llama.cpp (tools/server/server-context.cpp, `--metrics`): `llamacpp:requests_processing`,
 * `llamacpp:requests_deferred`, counters `llamacpp:prompt_tokens_total` (prompt tokens it
 * prefilled, cache hits excluded) and `llamacpp:prompt_seconds_total` (the time it spent on
 * them), whose differences between scrapes are its prefill speed, and `llamacpp:n_decode_total`
 * (decode calls: the life counter). It exports no KV usage or size: usage reads 0 and capacity
 * is learned from `cached_tokens`. Its `prompt_tokens_seconds` gauge is not used: it averages
 * since the previous scrape by anyone (each `/metrics` call resets it), so two scrapers halve it.
 * Several series of one metric (DP ranks, engines) are summed; usage is averaged.
 */
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";

export const ENGINE_KINDS = ["vllm", "sglang", "llamacpp"] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/** An engine's cumulative prefill counters: uncached prompt tokens and the seconds they took. */
export interface PrefillCounters {
  tokens: number;
  seconds: number;
}

export interface EngineSample {
  running: number;
  waiting: number;
  kvUsage: number;
  kvCapacityTokens: number | null;
  /** A monotonic counter of the engine's life (prefix-cache queries); falls when it restarts. */
  lifeCounter: number | null;
  /** Cumulative prefill counters, for engines that export them (llama.cpp); else null. */
  prefill: PrefillCounters | null;
}

interface Names {
  running: string;
  waiting: string;
  usage: readonly string[];
  life: readonly string[];
  config?: { name: string; blockLabel: string; countLabel: string };
  prefill?: { tokens: string; seconds: string };
}

const NAMES: Record<EngineKind, Names> = {
  vllm: {
    running: "vllm:num_requests_running",
    waiting: "vllm:num_requests_waiting",
    usage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    life: [
      "vllm:prefix_cache_queries_total",
      "vllm:prefix_cache_queries",
      "vllm:gpu_prefix_cache_queries_total",
    ],
    config: {
      name: "vllm:cache_config_info",
      blockLabel: "block_size",
      countLabel: "num_gpu_blocks",
    },
  },
  sglang: {
    running: "sglang:num_running_reqs",
    waiting: "sglang:num_queue_reqs",
    usage: ["sglang:token_usage"],
    life: ["sglang:num_requests_total", "sglang:prompt_tokens_total"],
    config: { name: "sglang:cache_config_info", blockLabel: "page_size", countLabel: "num_pages" },
  },
  llamacpp: {
    running: "llamacpp:requests_processing",
    waiting: "llamacpp:requests_deferred",
    usage: ["llamacpp:kv_cache_usage_ratio"],
    life: ["llamacpp:n_decode_total"],
    prefill: { tokens: "llamacpp:prompt_tokens_total", seconds: "llamacpp:prompt_seconds_total" },
  },
};

function values(families: Map<string, PrometheusFamily>, name: string): number[] {
  const family = families.get(name);
  if (!family) return [];
  return family.metrics.map((m) => Number(m.value)).filter((v) => Number.isFinite(v));
}

function first(families: Map<string, PrometheusFamily>, names: readonly string[]): number[] {
  for (const name of names) {
    const v = values(families, name);
    if (v.length > 0) return v;
  }
  return [];
}

const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);

/** The webhook numbers in one scrape; throws if the text has no load metrics of that engine. */
export function readEngineMetrics(text: string, kind: EngineKind): EngineSample {
  const names = NAMES[kind];
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  const running = values(families, names.running);
  const waiting = values(families, names.waiting);
  if (running.length === 0 || waiting.length === 0) {
    throw new Error(`no ${names.running} / ${names.waiting} in the ${kind} metrics`);
  }
  const usage = first(families, names.usage);
  const life = first(families, names.life);
  let kvCapacityTokens: number | null = null;
  if (names.config) {
    const { name, blockLabel, countLabel } = names.config;
    for (const m of families.get(name)?.metrics ?? []) {
      const block = Number(m.labels?.[blockLabel]);
      const count = Number(m.labels?.[countLabel]);
      if (block > 0 && count > 0) kvCapacityTokens = (kvCapacityTokens ?? 0) + block * count;
    }
  }
  const tokens = names.prefill ? values(families, names.prefill.tokens) : [];
  const seconds = names.prefill ? values(families, names.prefill.seconds) : [];
  return {
    running: Math.round(sum(running)),
    waiting: Math.round(sum(waiting)),
    kvUsage: usage.length ? Math.min(1, Math.max(0, sum(usage) / usage.length)) : 0,
    kvCapacityTokens,
    lifeCounter: life.length ? sum(life) : null,
    prefill:
      tokens.length && seconds.length ? { tokens: sum(tokens), seconds: sum(seconds) } : null,
  };
}
