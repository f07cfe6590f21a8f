/**
 * Real llama-servers on this machine's CPU, set up for trace replays (`npm start -- --engines
 * llama`, `npm run bench:real`): the bench model, the engine flags, how trace prompts shrink to
 * what a CPU prefills in seconds, a nominal speed the replay is paced by and the origins'
 * settings are given, and the engines' speed measured once at start (one prompt on one idle
 * engine, from its own counters: reported, and the simulator's decode step).
 *
 * Sizes: the bench model prefills 560-700 tokens/s per thread on an idle core here, 220-300
 * while the machine is shared with other jobs, one token per byte. The pacing takes a fixed
 * `NOMINAL_TOKENS_PER_SECOND` per core, not the probe: one prompt measured on a machine whose
 * load comes and goes read 223 to 699 tokens/s across runs, and pacing by it gave one run
 * twice the offered load of another, where a fixed speed gives every run the same requests at
 * the same times. Each 512-token block of a trace becomes 16 bytes, so a median
 * Mooncake conversation turn (~8,700 tokens) is ~270 bytes and a p90 one ~850, cut at 2,048:
 * a cold prefill takes a second or a few, a cached one a few tens of ms. Each engine keeps
 * two slots and a 32 MiB `--cache-ram` (~4,000 tokens of this model's KV): a few
 * conversations, so the cache is under real pressure when every engine sees every
 * conversation (round-robin) and holds its share when conversations stay put.
 */
import { availableParallelism } from "node:os";
import { BYTES_PER_TOKEN } from "../../src/core/chunk-hash.ts";
import type { ScheduleOptions } from "../replay/schedule.ts";
import { counterDelta, type EngineCounters, readCounters } from "./engine-counters.ts";
import { type LlamaFleet, startLlamaFleet, threadsPerEngine } from "./llama-fleet.ts";
import { findLlamaServer } from "./llama-server.ts";
import { ensureModel, MODEL_SHAPES } from "./model.ts";

/** How trace prompts are shrunk and counted for these engines (schedule.ts). */
export const CPU_PROMPTS = {
  bytesPerBlock: 16,
  maxPromptBytes: 2048,
  bytesPerToken: 1,
} as const satisfies Partial<ScheduleOptions>;

/**
 * Pool settings for these prompts: 64-byte chunks (the least the settings allow), so a prompt
 * of a few hundred bytes still spans several chunks the index can match.
 */
export const CPU_POOL = { chunkBytes: 64 } as const;

export const CPU_ENGINE = { slots: 2, ctxTokens: 8192, cacheRamMiB: 32 } as const;

/** KV bytes per token of the bench model in llama.cpp's default f16 cache. */
export function kvBytesPerToken(): number {
  const s = MODEL_SHAPES.bench;
  return s.layers * s.kvHeads * (s.dim / s.heads) * 2 * 2;
}

/** Engine tokens an engine keeps cached: its `--cache-ram` and its slots' own context. */
export function cachedTokensPerEngine(): number {
  return Math.floor((CPU_ENGINE.cacheRamMiB * 2 ** 20) / kvBytesPerToken()) + CPU_ENGINE.ctxTokens;
}

/** Prompt tokens per second per core the replays are paced by (the shared machine's speed). */
export const NOMINAL_TOKENS_PER_SECOND = 300;

export interface CpuEngines {
  fleet: LlamaFleet;
  /** One engine's prefill speed alone on the machine, engine tokens per second. */
  engineTokensPerSecond: number;
  /** One engine's decode step alone on the machine, ms per output token. */
  decodeMsPerToken: number;
  /** The fleet's nominal speed: `NOMINAL_TOKENS_PER_SECOND` times the cores its threads use. */
  fleetTokensPerSecond: number;
  /** Cores the engines' threads can use at once. */
  cores: number;
}

const PROBE_OUTPUT_TOKENS = 16;

/** One fresh prompt on an idle engine: its prefill and decode, from the engine's counters. */
async function probe(url: string): Promise<EngineCounters> {
  const before = await readCounters(url);
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      messages: [{ role: "user", content: "calibration prompt; ".repeat(40) }],
      max_tokens: PROBE_OUTPUT_TOKENS,
      // A random model may end at once on an end token: decode the whole count.
      ignore_eos: true,
    }),
  });
  if (!res.ok) throw new Error(`probe of ${url}: ${res.status} ${await res.text()}`);
  await res.json();
  return counterDelta(before, await readCounters(url));
}

/**
 * Start `count` engines of `slots` slots each (default `CPU_ENGINE.slots`); fails with what is
 * missing when there is no llama-server.
 */
export async function startCpuEngines(
  count: number,
  log?: (line: string) => void,
  slots: number = CPU_ENGINE.slots,
): Promise<CpuEngines> {
  const found = findLlamaServer();
  if ("missing" in found) throw new Error(`${found.missing} (set LLAMA_SERVER to its path)`);
  const model = await ensureModel({ size: "bench" });
  const threads = threadsPerEngine(count);
  const cores = Math.min(availableParallelism(), count * threads);
  const options = { binary: found.path, model, count, threads, ...CPU_ENGINE, slots, log };
  const first = await startLlamaFleet({ ...options, count: 1 });
  let alone: EngineCounters;
  try {
    alone = await probe(first.servers[0]?.url as string);
  } finally {
    await first.stop();
  }
  const engineTokensPerSecond = alone.promptTokens / Math.max(1e-3, alone.promptSeconds);
  const decodeMsPerToken = (1000 * alone.decodeSeconds) / Math.max(1, alone.decodeTokens);
  const fleetTokensPerSecond = NOMINAL_TOKENS_PER_SECOND * cores;
  // The router's settings count ~4 bytes per token: the engines' speed in those tokens, shared.
  const prefillTokensPerSecond = Math.max(
    1,
    Math.round((fleetTokensPerSecond / count) * (CPU_PROMPTS.bytesPerToken / BYTES_PER_TOKEN)),
  );
  const kvCapacityTokens = Math.round(
    cachedTokensPerEngine() * (CPU_PROMPTS.bytesPerToken / BYTES_PER_TOKEN),
  );
  const fleet = await startLlamaFleet({ ...options, prefillTokensPerSecond, kvCapacityTokens });
  return { fleet, engineTokensPerSecond, decodeMsPerToken, fleetTokensPerSecond, cores };
}
