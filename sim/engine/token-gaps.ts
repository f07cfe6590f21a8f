/**
 * Every gap between two consecutive output tokens of any request an engine served, kept as
 * (gap, how many tokens waited it) pairs: the decodes of one iteration share its length, so a
 * decode span of k iterations over n requests is k entries, not k x n. What vLLM's benchmark
 * calls ITL (`benchmark_serving.py` pools every request's inter-token latencies) is a quantile
 * of this multiset; `weightedQuantile` (sim/report/stats.ts) reads it exactly.
 */
export class TokenGaps {
  #values = new Float64Array(1024);
  #counts = new Float64Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** `count` output tokens each came `gapMs` after the request's previous one. */
  add(gapMs: number, count: number): void {
    if (count <= 0) return;
    if (this.#size === this.#values.length) {
      this.#values = grow(this.#values);
      this.#counts = grow(this.#counts);
    }
    this.#values[this.#size] = gapMs;
    this.#counts[this.#size] = count;
    this.#size++;
  }

  /** Gaps of `others` join these. */
  merge(others: TokenGaps): void {
    for (let i = 0; i < others.#size; i++) {
      this.add(others.#values[i] as number, others.#counts[i] as number);
    }
  }

  /** The gaps in ascending order with their counts (sorted copies). */
  sorted(): { values: Float64Array; counts: Float64Array } {
    const order = Uint32Array.from({ length: this.#size }, (_, i) => i);
    const v = this.#values;
    order.sort((a, b) => (v[a] as number) - (v[b] as number));
    return {
      values: Float64Array.from(order, (i) => v[i] as number),
      counts: Float64Array.from(order, (i) => this.#counts[i] as number),
    };
  }
}

function grow(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}
