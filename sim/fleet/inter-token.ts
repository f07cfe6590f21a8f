/**
 * Inter-token latency, from the engines' own token times, three ways (each as mean and
 * nearest-rank p50/p90/p99):
 * - ITL (`itlMs`): every gap between two consecutive output tokens of any request, pooled over
 *   all tokens of all requests, as vLLM's `benchmark_serving.py` reports ITL. An iteration that
 *   prefills a long chunk stalls every decode in its batch for that iteration's length, so its
 *   p99 is where disaggregated prefill shows first.
 * - TPOT (`tpotMs`): per request, its mean time between output tokens, (last token - first
 *   token) / (output tokens - 1), over requests. A request of one output token has none.
 * - max gap (`maxGapMs`): per request, its longest wait between two of its output tokens, over
 *   requests: how many requests a stall reached.
 * For a disaggregated request these are its decode leg's (the prefill leg's one token is not
 * the client's: the decode engine samples the first token the client sees).
 */
import type { EngineRequest } from "../engine/engine.ts";
import { TokenGaps } from "../engine/token-gaps.ts";
import { quantile, round, weightedQuantile } from "../report/stats.ts";

export interface Spread {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
}

const ms = (x: number) => round(x, 1);

export function spreadOf(values: Float64Array | number[]): Spread {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const mean = n > 0 ? sorted.reduce((a, b) => a + b, 0) / n : 0;
  return {
    mean: ms(mean),
    p50: ms(quantile(sorted, 0.5)),
    p90: ms(quantile(sorted, 0.9)),
    p99: ms(quantile(sorted, 0.99)),
  };
}

function pooledSpread(all: readonly TokenGaps[]): Spread {
  const pooled = new TokenGaps();
  for (const gaps of all) pooled.merge(gaps);
  const { values, counts } = pooled.sorted();
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    sum += (values[i] as number) * (counts[i] as number);
    n += counts[i] as number;
  }
  const at = (q: number) => ms(weightedQuantile(values, counts, q));
  return { mean: ms(n > 0 ? sum / n : 0), p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

export function interTokenLatency(
  requests: readonly EngineRequest[],
  gaps: readonly TokenGaps[],
): { itlMs: Spread; tpotMs: Spread; maxGapMs: Spread } {
  const tpot: number[] = [];
  const gap: number[] = [];
  for (const r of requests) {
    if (r.generated < 2) continue;
    tpot.push((r.finishMs - r.firstTokenMs) / (r.generated - 1));
    gap.push(r.maxGapMs);
  }
  return { itlMs: pooledSpread(gaps), tpotMs: spreadOf(tpot), maxGapMs: spreadOf(gap) };
}
