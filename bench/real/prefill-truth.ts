/**
 * An engine's true prefill speed over a run, from its requests' own timings (llama-server's
 * `timings.prompt_n` / `prompt_ms`, the prefill ending at the answer's first byte), as opposed
 * to its `/metrics` counters, which add up each request's prompt time whole: with several slots,
 * two prompts prefilled in one batch each count the batch's whole time, so the counters read up
 * to slots times slower than the engine works.
 *
 * - `busy`: prompt tokens over the time the engine spent prefilling anything (the union of the
 *   requests' prefill intervals): the speed the router's queue model drains at.
 * - `alone`: prompt tokens over prompt time of the requests whose prefill overlapped no other
 *   request's on the engine: per-request readings no batch-mate inflated.
 * - `counters`: prompt tokens over the summed prompt times, what `/metrics` differenced reads.
 * - `line`: the engine's prompt times as the router models a request's, `a + 1000 n / S`
 *   (Theil-Sen: the median slope over pairs, the median intercept; robust like the router's
 *   fit, so a few prefills slowed by a co-tenant do not set it): `S` the marginal speed, `a`
 *   each prefill's fixed cost. On a CPU model with prompts of tens to hundreds of tokens `a` is
 *   tens of ms, which the counters' speed folds in and the router's puts in its fixed time.
 */

/** One request's prefill as the engine timed it, on the client's clock (ms). */
export interface PrefillTiming {
  /** When the answer's first byte arrived: the prefill's end. */
  readonly endMs: number;
  /** The engine's `timings.prompt_ms`. */
  readonly promptMs: number;
  /** The engine's `timings.prompt_n`: tokens prefilled (cache hits excluded). */
  readonly promptTokens: number;
}

export interface PrefillSpeeds {
  /** Tokens per second of the engine's prefilling time (null: nothing prefilled). */
  readonly busy: number | null;
  /** Tokens per second over the requests that prefilled alone (null: none did). */
  readonly alone: number | null;
  /** Requests that prefilled alone. */
  readonly aloneRequests: number;
  /** Tokens per summed prompt second, as the counters read (null: nothing prefilled). */
  readonly counters: number | null;
  /** The robust line through the prompt times (null: fewer than two prompt lengths). */
  readonly line: { tokensPerSecond: number; fixedMs: number } | null;
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2
    ? (values[mid] as number)
    : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
}

/** Theil-Sen's line `ms = a + slope n` through the timings; null without a rising slope. */
function theilSen(timings: readonly PrefillTiming[]): PrefillSpeeds["line"] {
  const slopes: number[] = [];
  for (const [i, p] of timings.entries()) {
    for (const q of timings.slice(i + 1)) {
      const dn = q.promptTokens - p.promptTokens;
      if (dn !== 0) slopes.push((q.promptMs - p.promptMs) / dn);
    }
  }
  if (slopes.length === 0) return null;
  const slope = median(slopes);
  if (!(slope > 0)) return null;
  const fixedMs = median(timings.map((t) => t.promptMs - slope * t.promptTokens));
  return { tokensPerSecond: 1000 / slope, fixedMs };
}

function rate(tokens: number, ms: number): number | null {
  return ms > 0 && tokens > 0 ? (1000 * tokens) / ms : null;
}

/** The speeds of one engine's prefills (`timings`: every request it served in the run). */
export function prefillSpeeds(timings: readonly PrefillTiming[]): PrefillSpeeds {
  const spans = timings
    .filter((t) => t.promptTokens > 0)
    .map((t) => ({ from: t.endMs - t.promptMs, to: t.endMs, t }))
    .sort((a, b) => a.from - b.from);
  let tokens = 0;
  let summedMs = 0;
  let unionMs = 0;
  let aloneTokens = 0;
  let aloneMs = 0;
  let aloneRequests = 0;
  // Spans sorted by start: one overlaps another iff it starts before the latest end so far
  // (an earlier span), or a later span starts before it ends.
  let reach = Number.NEGATIVE_INFINITY;
  let coveredTo = Number.NEGATIVE_INFINITY;
  for (const [i, s] of spans.entries()) {
    tokens += s.t.promptTokens;
    summedMs += s.t.promptMs;
    unionMs += Math.max(0, s.to - Math.max(s.from, coveredTo));
    coveredTo = Math.max(coveredTo, s.to);
    const next = spans[i + 1];
    if (s.from >= reach && (next === undefined || next.from >= s.to)) {
      aloneTokens += s.t.promptTokens;
      aloneMs += s.t.promptMs;
      aloneRequests++;
    }
    reach = Math.max(reach, s.to);
  }
  return {
    busy: rate(tokens, unionMs),
    alone: rate(aloneTokens, aloneMs),
    aloneRequests,
    counters: rate(tokens, summedMs),
    line: theilSen(spans.map((s) => s.t)),
  };
}
