/**
 * The simulated engines' prefill counters as this router's reporter reads them: prompt tokens
 * prefilled (cache hits excluded) and the seconds of the iterations that prefilled them, as
 * llama.cpp's prompt_tokens_total / prompt_seconds_total count, differenced at each load report
 * into a `prefill-rate` event once the span covers MIN_PREFILL_SECONDS (the reporter's rule,
 * tools/reporter/reporter-state.ts, which the simulator may not import). An iteration that prefills
 * also carries the decodes batched with it, and long prompts pay attention beyond the linear
 * speed, so the rate reads below the profile's linear speed, as a real engine's counters do (a
 * third of it on the conversation trace at load 0.8: what prefill drains at with that decode
 * batch). A llama-server with one slot counts exactly this; with several, each slot counts the
 * whole time of the batches its prompt was in, which reads slower still.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";

/** Prefill seconds a rate spans at least (tools/reporter/reporter-state.ts). */
export const MIN_PREFILL_SECONDS = 0.1;

export class PrefillCounters {
  /** Per origin, the counters at the start of its current span: tokens, ms. */
  readonly #fromTokens: Float64Array;
  readonly #fromMs: Float64Array;

  constructor(origins: number) {
    this.#fromTokens = new Float64Array(origins);
    this.#fromMs = new Float64Array(origins);
  }

  /** Origin `o`'s counters now (`tokens` prefilled, `prefillMs` spent): a rate event, or null. */
  read(o: number, tokens: number, prefillMs: number): EngineEvent | null {
    const n = Math.round(tokens - (this.#fromTokens[o] as number));
    const seconds = (prefillMs - (this.#fromMs[o] as number)) / 1000;
    if (seconds < MIN_PREFILL_SECONDS || n < 1) return null;
    this.#fromTokens[o] = tokens;
    this.#fromMs[o] = prefillMs;
    return { type: "prefill-rate", tokensPerSecond: n / seconds, tokens: n };
  }
}
