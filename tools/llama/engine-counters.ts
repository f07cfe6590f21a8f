/**
 * A llama-server's work since it started, from its own `/metrics` counters: prompt tokens
 * prefilled (cache hits excluded) and the seconds spent on them, tokens decoded and theirs.
 * Each request's time counts whole, also when it shared a batch with other slots' work, so the
 * ratios are speeds one request saw, the engine's own only when it ran one request at a time.
 */
import { readEngineMetrics } from "../reporter/engine-metrics.ts";

export interface EngineCounters {
  promptTokens: number;
  promptSeconds: number;
  decodeTokens: number;
  decodeSeconds: number;
}

const ZERO: EngineCounters = {
  promptTokens: 0,
  promptSeconds: 0,
  decodeTokens: 0,
  decodeSeconds: 0,
};

function counter(text: string, name: string): number {
  const value = Number(text.match(new RegExp(`^${name} (\\S+)`, "m"))?.[1]);
  if (!Number.isFinite(value)) throw new Error(`no ${name} in the engine's metrics`);
  return value;
}

/** One engine's counters since it started. */
export async function readCounters(url: string): Promise<EngineCounters> {
  const res = await fetch(new URL("/metrics", url), { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${url}/metrics: ${res.status}`);
  const text = await res.text();
  const prefill = readEngineMetrics(text, "llamacpp").prefill ?? { tokens: 0, seconds: 0 };
  return {
    promptTokens: prefill.tokens,
    promptSeconds: prefill.seconds,
    decodeTokens: counter(text, "llamacpp:tokens_predicted_total"),
    decodeSeconds: counter(text, "llamacpp:tokens_predicted_seconds_total"),
  };
}

/** b - a: the work between two readings. */
export function counterDelta(a: EngineCounters, b: EngineCounters): EngineCounters {
  return {
    promptTokens: b.promptTokens - a.promptTokens,
    promptSeconds: b.promptSeconds - a.promptSeconds,
    decodeTokens: b.decodeTokens - a.decodeTokens,
    decodeSeconds: b.decodeSeconds - a.decodeSeconds,
  };
}

export function addCounters(list: readonly EngineCounters[]): EngineCounters {
  return list.reduce(
    (a, b) => ({
      promptTokens: a.promptTokens + b.promptTokens,
      promptSeconds: a.promptSeconds + b.promptSeconds,
      decodeTokens: a.decodeTokens + b.decodeTokens,
      decodeSeconds: a.decodeSeconds + b.decodeSeconds,
    }),
    ZERO,
  );
}
