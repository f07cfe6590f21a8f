/**
 * @module
 * Prompt tokens per minute per key, counted in this isolate with one token bucket per key: it
 * holds at most a minute's budget and refills continuously (budget / 60 s). A request passes
 * while its key's bucket is not in debt and takes its prompt's estimate (the edge's, bytes / 4),
 * even into debt, so a prompt larger than the whole budget still passes once the bucket is full
 * instead of never; a refused one is told when the debt will be repaid (`retryAfterMs`). Over
 * any span of t minutes a key spends at most (t + 1) budgets plus one prompt, per isolate.
 *
 * Per isolate by design: counting globally would put an object call (or a KV write) on every
 * request's path, and Cloudflare's rate-limiting binding counts calls, not amounts, with a
 * limit fixed per binding. So it is approximate: a key whose requests land on k isolates (one
 * Cloudflare location runs several, and each location its own) may spend up to k budgets a
 * minute (docs/api.md, "Rate limits"). An isolate that restarts starts every bucket full.
 *
 * Memory: one entry per key seen; past `MAX_BUCKETS`, buckets that have refilled (the same as
 * no entry) are dropped, and if none has, the stalest.
 */

const MAX_BUCKETS = 4096;
const MINUTE_MS = 60_000;

export type Spend = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Counted in token-milliseconds per minute (tokens x 60,000), so that a bucket refills by
 * exactly `perMinute` a millisecond and every figure is an integer: a refused request retried
 * at its `retryAfterMs` finds its debt repaid, with no rounding left over.
 */
interface Bucket {
  /** What it held at `at`; negative while in debt. */
  held: number;
  at: number;
  perMinute: number;
}

/** What `b` holds at `now`: what it held, refilled at its rate, at most a minute's budget. */
const heldAt = (b: Bucket, now: number) =>
  Math.min(b.perMinute * MINUTE_MS, b.held + Math.max(0, now - b.at) * b.perMinute);

export class TokenBudgets {
  /** In the order they were last spent from, stalest first. */
  #buckets = new Map<string, Bucket>();

  /**
   * Spend `tokens` of `key`'s budget of `perMinute` (integers; `perMinute` up to 1e9), if its
   * bucket is not in debt at `now` (ms).
   */
  spend(key: string, perMinute: number, tokens: number, now: number): Spend {
    const bucket = this.#buckets.get(key);
    const held =
      bucket === undefined ? perMinute * MINUTE_MS : heldAt({ ...bucket, perMinute }, now);
    if (held < 0) return { ok: false, retryAfterMs: Math.ceil(-held / perMinute) };
    this.#buckets.delete(key);
    if (this.#buckets.size >= MAX_BUCKETS) this.#sweep(now);
    this.#buckets.set(key, { held: held - tokens * MINUTE_MS, at: now, perMinute });
    return { ok: true };
  }

  /** Keys holding a bucket (tests check the bound). */
  get size(): number {
    return this.#buckets.size;
  }

  /** Drop the buckets that have refilled; if none has, the stalest. */
  #sweep(now: number): void {
    for (const [key, b] of this.#buckets)
      if (heldAt(b, now) >= b.perMinute * MINUTE_MS) this.#buckets.delete(key);
    if (this.#buckets.size < MAX_BUCKETS) return;
    const stalest = this.#buckets.keys().next().value;
    if (stalest !== undefined) this.#buckets.delete(stalest);
  }
}

/** The isolate's budgets: module state lives as long as the isolate, across requests. */
export const tokenBudgets = new TokenBudgets();
