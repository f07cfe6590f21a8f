/**
 * @module
 * A pool's requests and engine-reported prompt tokens per client key, for the `key` label of
 * the `llm_router_key_*` families: the key's id, never the key. Bounded: the first
 * `MAX_KEY_LABELS` ids the pool's object sees after it starts get series of their own, and every
 * later key is counted under `other`, so a Worker with thousands of keys cannot flood
 * Prometheus. Not the top N by volume: a key moving into or out of a top N would make its own
 * counter and `other`'s go backwards, which Prometheus reads as resets. The object's counters
 * restart with it, and the first keys are chosen again then.
 */
import type { RequestOutcome, RequestReport } from "../request-record/request-report.ts";

export const MAX_KEY_LABELS = 32;
export const OTHER_KEYS = "other";

export interface KeyCounters {
  requests: Partial<Record<RequestOutcome, number>>;
  /** Engine-reported prompt tokens of the key's requests that reported usage. */
  promptTokens: number;
}

export class KeyCounterSet {
  #keys = new Map<string, KeyCounters>();

  record(report: RequestReport): void {
    if (report.keyId === undefined) return;
    const label =
      this.#keys.has(report.keyId) || this.#keys.size < MAX_KEY_LABELS ? report.keyId : OTHER_KEYS;
    let c = this.#keys.get(label);
    if (!c) {
      c = { requests: {}, promptTokens: 0 };
      this.#keys.set(label, c);
    }
    c.requests[report.outcome] = (c.requests[report.outcome] ?? 0) + 1;
    c.promptTokens += report.promptTokens ?? 0;
  }

  snapshot(): Record<string, KeyCounters> {
    return Object.fromEntries(
      [...this.#keys].map(([k, c]) => [
        k,
        { requests: { ...c.requests }, promptTokens: c.promptTokens },
      ]),
    );
  }
}
