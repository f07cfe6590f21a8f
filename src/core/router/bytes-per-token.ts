/**
 * A pool's bytes per token, learned online: the canonical prompt bytes the edge hashed against
 * the `prompt_tokens` its engines report. The edge has no tokenizer, so every token estimate
 * the core makes (cost's prompt tokens, admission's wait, P/D's rule, tokens per index chunk)
 * divides bytes by this ratio. The prior is BYTES_PER_TOKEN (4: English text under a BPE
 * tokenizer); code runs about 3, CJK text 1-2, a byte-level tokenizer (this project's
 * llama.cpp engines) exactly 1.
 *
 * The estimate is a weighted mean of log(bytes / tokens), each sample first clamped to
 * [MIN_RATIO, MAX_RATIO] and then to within a factor 2 of the current estimate (STEP, in logs),
 * so one wild sample moves it by at most STEP / (weight + 1): about 1% once learned, 8% against
 * the prior alone. The prior counts as PRIOR_WEIGHT samples; the total weight is capped at
 * MAX_WEIGHT (after which it is an exponential average over about that many requests) and
 * halves every HALF_LIFE_MS without traffic, never below PRIOR_WEIGHT: a changed model or
 * workload is followed within some 300 requests (unit tests), fewer after a quiet spell. Prompts under MIN_TOKENS teach nothing: a template's
 * fixed tokens dominate them.
 *
 * Pure: `now` is passed in. The learned value is snapshot, shown, and sent to edge replicas.
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";

export const MIN_RATIO = 0.5;
export const MAX_RATIO = 16;
const STEP = Math.log(2);
const PRIOR_WEIGHT = 8;
const MAX_WEIGHT = 64;
const HALF_LIFE_MS = 300_000;
const MIN_TOKENS = 32;

/** What the learner saved, shown and sent to replicas. */
export interface LearnedBytesPerToken {
  /** Bytes per token routing reads: learned, or the prior while `samples` is 0. */
  readonly bytesPerToken: number;
  /** Samples it was learned from. */
  readonly samples: number;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

export class BytesPerTokenLearner {
  /** False for an edge replica's router: it adopts its coordinator's instead. */
  readonly #learns: boolean;
  /** The estimate, as log(bytes per token). */
  #log = Math.log(BYTES_PER_TOKEN);
  #weight = PRIOR_WEIGHT;
  #samples = 0;
  #at: number | null = null;

  constructor(learns = true) {
    this.#learns = learns;
  }

  /** Bytes per token routing reads. */
  get ratio(): number {
    return Math.exp(this.#log);
  }

  /**
   * One completed request: `bytes` canonical prompt bytes the engine counted as `tokens`.
   * True when the estimate moved (a sample was taken).
   */
  observe(bytes: number, tokens: number, now: number): boolean {
    if (
      !this.#learns ||
      !(tokens >= MIN_TOKENS) ||
      !(bytes > 0) ||
      !Number.isFinite(bytes / tokens)
    )
      return false;
    if (this.#at !== null && now > this.#at) {
      const decayed = this.#weight * 2 ** (-(now - this.#at) / HALF_LIFE_MS);
      this.#weight = Math.max(PRIOR_WEIGHT, decayed);
    }
    this.#at = now;
    const sample = Math.log(clamp(bytes / tokens, MIN_RATIO, MAX_RATIO));
    const x = clamp(sample, this.#log - STEP, this.#log + STEP);
    this.#weight = Math.min(MAX_WEIGHT, this.#weight + 1);
    this.#log += (x - this.#log) / this.#weight;
    this.#samples++;
    return true;
  }

  /** Prompt tokens of `bytes` canonical bytes at the learned ratio. */
  tokens(bytes: number): number {
    return Math.ceil(bytes / this.ratio);
  }

  saved(): LearnedBytesPerToken {
    return { bytesPerToken: this.ratio, samples: this.#samples };
  }

  /** Take what another router learned (a snapshot, or a replica's coordinator). */
  adopt(learned: LearnedBytesPerToken): void {
    const ratio = clamp(learned.bytesPerToken, MIN_RATIO, MAX_RATIO);
    if (!Number.isFinite(ratio) || !(learned.samples >= 0)) return;
    this.#log = Math.log(ratio);
    this.#samples = learned.samples;
    this.#weight = clamp(PRIOR_WEIGHT + learned.samples, PRIOR_WEIGHT, MAX_WEIGHT);
  }
}
