/**
 * @module
 * Prompt tokens per minute per key, counted in this isolate with one token bucket per key: it
 * holds at most a minute's budget and refills continuously (budget / 60 s). A request passes
 * while its key's bucket is not in debt and takes its prompt's estimate (the edge's, bytes / 4,
 * spent before the request goes, so that it can be refused), even into debt, so a prompt larger
 * than the whole budget still passes once the bucket is full instead of never; a refused one is
 * told when the debt will be repaid (`retryAfterMs`). Once the engine has answered with its own
 * count, `settle` charges the difference (or refunds it, never past a full bucket), unchecked:
 * the count is what the prompt cost, and an estimate at 4 bytes a token misses code (about 3)
 * and CJK text (1-2) by 25-75%.
 *
 * So what a key is charged, estimates and corrections alike, is what bounds it: over any span
 * of t minutes, at most (t + 1) budgets, plus the estimate of the last request it admitted,
 * plus the corrections of the requests that were still in flight then (each admitted while the
 * bucket was not in debt, before its engine had counted it). A key's requests in flight at
 * once each pass at their estimate: the bound loosens with its concurrency.
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
  /** In the order they were last spent from or settled, stalest first. */
  #buckets = new Map<string, Bucket>();

  /**
   * Spend `tokens` of `key`'s budget of `perMinute` (integers; `perMinute` up to 1e9), if its
   * bucket is not in debt at `now` (ms).
   */
  spend(key: string, perMinute: number, tokens: number, now: number): Spend {
    const held = this.#heldAt(key, perMinute, now);
    if (held < 0) return { ok: false, retryAfterMs: Math.ceil(-held / perMinute) };
    this.#put(key, { held: held - tokens * MINUTE_MS, at: now, perMinute }, now);
    return { ok: true };
  }

  /**
   * Charge `tokens` more (an integer; negative to refund) to `key`'s bucket at `now`, in debt or
   * not: a spent estimate corrected to the engine's count. A refund fills it to a minute's
   * budget at most.
   */
  settle(key: string, perMinute: number, tokens: number, now: number): void {
    if (tokens === 0) return;
    const full = perMinute * MINUTE_MS;
    const held = Math.min(full, this.#heldAt(key, perMinute, now) - tokens * MINUTE_MS);
    // A full bucket is the same as none (and the sweep drops it).
    if (held === full && !this.#buckets.has(key)) return;
    this.#put(key, { held, at: now, perMinute }, now);
  }

  /** Keys holding a bucket (tests check the bound). */
  get size(): number {
    return this.#buckets.size;
  }

  /** What `key`'s bucket holds at `now`, at the rate `perMinute`: a minute's budget if none. */
  #heldAt(key: string, perMinute: number, now: number): number {
    const bucket = this.#buckets.get(key);
    return bucket === undefined ? perMinute * MINUTE_MS : heldAt({ ...bucket, perMinute }, now);
  }

  /** Keep `bucket` as `key`'s, the freshest. */
  #put(key: string, bucket: Bucket, now: number): void {
    this.#buckets.delete(key);
    if (this.#buckets.size >= MAX_BUCKETS) this.#sweep(now);
    this.#buckets.set(key, bucket);
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
