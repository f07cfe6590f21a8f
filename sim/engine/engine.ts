/**
 * One simulated engine: vLLM V1's scheduler over a paged, prefix-cached KV cache
 * (vllm/v1/core/sched/scheduler.py `schedule`), advanced one continuous-batching iteration at a
 * time, and many decode-only iterations at once.
 *
 * Each iteration has a token budget (max_num_batched_tokens) shared by everything it computes:
 * 1. running requests in admission order take what they still need (1 token for a decode, up to
 *    the budget for a prompt being prefilled in chunks); a request whose blocks cannot be
 *    allocated preempts the newest running request (recompute: its blocks are freed but stay
 *    cached, it goes back to the head of the queue), possibly itself;
 * 2. if nobody was preempted, waiting requests are admitted first come first served while budget,
 *    sequence slots (max_num_seqs) and free blocks allow; an admitted request starts from its
 *    longest cached prefix (at most all but the last token, which vLLM always recomputes for
 *    its logits) and reports that as `cached_tokens`.
 * When a request's computed tokens reach its length the iteration samples its next token: the
 * first one ends its prefill (time to first token), the last one ends the request.
 *
 * Coarse but faithful steps: an iteration that only decodes (nothing to prefill, nothing that
 * can be admitted) is repeated identically until the first request finishes or free blocks run
 * out, so such a span is planned as one step of k iterations with each iteration's time summed
 * (contexts grow by one token per request per iteration). An arrival during a span cuts it after
 * the iteration in progress (`interrupt`), exactly where the real scheduler would first see the
 * new request. Times are milliseconds of simulated time.
 *
 * KV events (option `kvEvents`): as vLLM publishes BlockStored / BlockRemoved after each step,
 * the engine logs each run of blocks it newly caches (`kv-stored`, after its parent block) and
 * each cached block it evicts (`kv-removed`), in order, named by the router's chunk hashes; the
 * caller drains them with `takeKvEvents` (router/index-feed.ts applies them).
 *
 * Disaggregated prefill/decode needs no other scheduler: a prefill engine is this one given
 * requests of one output token (the prefill leg's `max_tokens: 1`), and a decode engine is this
 * one given requests whose prompt KV a transfer delivered (`remoteTokens`, all but the last
 * prompt token, as vLLM's NixlConnector loads them): admitted with those tokens computed, it
 * computes the last prompt token in its first iteration and samples the first output token.
 *
 * Each request records the longest gap between two of its output tokens (`maxGapMs`): within a
 * decode span the iterations lengthen as contexts grow, so its last iteration is its longest.
 * Every gap of every request also goes to `gaps` (token-gaps.ts), one entry per iteration.
 */
import { type KvEvent, MAX_KV_HASHES } from "../../src/core/engine-events.ts";
import { prefillWork } from "../../src/core/prefill-work.ts";
import { BlockCache } from "./block-cache.ts";
import { iterationMs, prefillMs } from "./iteration-time.ts";
import type { EngineProfile } from "./profiles.ts";
import { TokenGaps } from "./token-gaps.ts";

export interface EngineRequest {
  readonly id: number;
  /** Chained hashes of the prompt's full blocks. */
  readonly hashes: ArrayLike<number>;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly arrivalMs: number;
  blocks: number[];
  /** Tokens whose KV is computed. */
  computed: number;
  generated: number;
  /**
   * Prefix-cache hit at first admission (vLLM's `num_cached_tokens`), KV delivered by a
   * transfer included, as vLLM counts it; -1 before.
   */
  cachedTokens: number;
  /** Leading prompt tokens whose KV a transfer delivers, used at first admission only. */
  remoteTokens: number;
  /** Prefix-cache hit when it joined the queue: its expected prefill while it waits. */
  cachedOnArrival: number;
  firstTokenMs: number;
  finishMs: number;
  /** When its latest output token was sampled, and the longest gap between two of them. */
  lastTokenMs: number;
  maxGapMs: number;
  /** Its client left (`Engine.abort`): it is dropped at the next step boundary. */
  aborted: boolean;
}

export function engineRequest(
  id: number,
  hashes: ArrayLike<number>,
  promptTokens: number,
  outputTokens: number,
  arrivalMs: number,
  remoteTokens = 0,
): EngineRequest {
  return {
    id,
    hashes,
    promptTokens,
    outputTokens: Math.max(1, outputTokens),
    arrivalMs,
    blocks: [],
    computed: 0,
    generated: 0,
    cachedTokens: -1,
    remoteTokens: Math.min(remoteTokens, Math.max(0, promptTokens - 1)),
    cachedOnArrival: 0,
    firstTokenMs: Number.NaN,
    finishMs: Number.NaN,
    lastTokenMs: Number.NaN,
    maxGapMs: 0,
    aborted: false,
  };
}

interface Step {
  start: number;
  end: number;
  chunks: EngineRequest[];
  chunkTokens: number[];
  decodes: EngineRequest[];
  /** Decode-only iterations in this step (1 when it prefills anything). */
  iterations: number;
  prefillComputeMs: number;
  /** Sum of the decodes' KV contexts in the first iteration. */
  decodeContext: number;
}

export interface StepResult {
  done: EngineRequest[];
  /** Requests whose first token came in this step. */
  started: EngineRequest[];
  prefilledTokens: number;
}

export interface EngineOptions {
  /** Log KV events for `takeKvEvents` (default false). */
  kvEvents?: boolean;
}

export class Engine {
  readonly profile: EngineProfile;
  readonly blockTokens: number;
  readonly cache: BlockCache;
  #waiting: EngineRequest[] = [];
  #head = 0;
  #running: EngineRequest[] = [];
  #step: Step | null = null;
  /** Aborted requests still in `#waiting` (skipped when they reach its head). */
  #abortedWaiting = 0;
  preemptions = 0;
  /** Every gap between two consecutive output tokens of a request, as it happened. */
  readonly gaps = new TokenGaps();
  /** Time spent iterating, and the part of it in iterations that prefill something, ms. */
  busyMs = 0;
  prefillBusyMs = 0;
  /** KV events not yet taken, or null when not logged. */
  #kv: KvEvent[] | null;

  constructor(profile: EngineProfile, blockTokens: number, options: EngineOptions = {}) {
    this.profile = profile;
    this.blockTokens = blockTokens;
    this.#kv = options.kvEvents ? [] : null;
    const onEvict = options.kvEvents ? (hash: number) => this.#removed(hash) : null;
    this.cache = new BlockCache(Math.floor(profile.kvCapacityTokens / blockTokens), onEvict);
  }

  /** The KV events since the last call, oldest first (empty unless `kvEvents` is on). */
  takeKvEvents(): KvEvent[] {
    if (this.#kv === null || this.#kv.length === 0) return [];
    const events = this.#kv;
    this.#kv = [];
    return events;
  }

  #removed(hash: number): void {
    const last = this.#kv?.at(-1);
    if (last?.type === "kv-removed" && last.hashes.length < MAX_KV_HASHES) last.hashes.push(hash);
    else this.#kv?.push({ type: "kv-removed", hashes: [hash] });
  }

  /** Seal `r`'s blocks [from, to); log each run of newly cached ones after its parent. */
  #seal(r: EngineRequest, from: number, to: number): void {
    let run: number[] | null = null;
    for (let c = from; c < to; c++) {
      const hash = r.hashes[c] as number;
      const fresh = this.cache.seal(r.blocks[c] as number, hash);
      if (this.#kv === null) continue;
      if (fresh && run !== null && run.length < MAX_KV_HASHES) {
        run.push(hash);
      } else if (fresh) {
        run = [hash];
        const parent = c > 0 ? (r.hashes[c - 1] as number) : null;
        this.#kv.push({ type: "kv-stored", parent, hashes: run });
      } else {
        run = null;
      }
    }
  }

  get busy(): boolean {
    return this.#step !== null;
  }

  get running(): number {
    return this.#running.length;
  }

  get waiting(): number {
    return this.#waiting.length - this.#head - this.#abortedWaiting;
  }

  /** vLLM's kv_cache_usage_perc: pinned blocks over all blocks (cached free blocks count free). */
  get kvUsage(): number {
    return this.cache.used / this.cache.total;
  }

  get hasWork(): boolean {
    return this.#running.length > 0 || this.waiting > 0;
  }

  enqueue(r: EngineRequest): void {
    const blocks = Math.ceil((r.promptTokens + r.outputTokens) / this.blockTokens);
    if (blocks > this.cache.total) {
      // vLLM rejects such a request up front (longer than max_model_len allows).
      throw new Error(
        `request ${r.id} needs ${blocks} KV blocks, more than the engine's ${this.cache.total}`,
      );
    }
    const cached = this.cache.lookup(r.hashes, r.hashes.length) * this.blockTokens;
    r.cachedOnArrival = Math.max(cached, r.remoteTokens);
    this.#waiting.push(r);
  }

  /**
   * Prefill work queued here: what waiting requests will prefill (judged by the cache when they
   * arrived) and what running ones have left to prefill, in the router's unit (short-context
   * token equivalents, attention-weighted: src/core/prefill-work.ts, at this profile's
   * attention length), as of the last step's end. The truth the router's fluid queue estimate
   * tries to track; in raw tokens it read half the router's figure on the conversation trace,
   * whose queues are mostly long prompts (bench/sim/README.md, "The queue estimate ...").
   */
  get prefillBacklog(): number {
    const attention = this.profile.attentionTokens;
    let work = 0;
    for (let i = this.#head; i < this.#waiting.length; i++) {
      const r = this.#waiting[i] as EngineRequest;
      const length = r.promptTokens + r.generated;
      if (!r.aborted) work += prefillWork(Math.min(r.cachedOnArrival, length), length, attention);
    }
    for (const r of this.#running) {
      if (r.aborted) continue;
      const length = r.promptTokens + r.generated;
      if (length - r.computed > 1 || r.generated === 0) {
        work += prefillWork(r.computed, length, attention);
      }
    }
    return work;
  }

  /** Plan the iteration(s) starting at `now`; returns the end time, or null when idle. */
  start(now: number): number | null {
    if (!this.hasWork) return null;
    const step: Step = {
      start: now,
      end: now,
      chunks: [],
      chunkTokens: [],
      decodes: [],
      iterations: 1,
      prefillComputeMs: 0,
      decodeContext: 0,
    };
    const preemptionsBefore = this.preemptions;
    let budget = this.profile.maxBatchedTokens;
    for (let i = 0; i < this.#running.length && budget > 0; i++) {
      const r = this.#running[i] as EngineRequest;
      const want = Math.min(r.promptTokens + r.generated - r.computed, budget);
      if (!this.#reserve(r, r.computed + want)) break;
      this.#plan(step, r, want);
      budget -= want;
    }
    const preempted = this.preemptions > preemptionsBefore;
    if (!preempted) this.#admit(step, budget);
    if (step.chunks.length === 0 && step.decodes.length === 0) {
      // Everything running was preempted this iteration; the next one admits from the queue.
      return this.start(now);
    }
    if (!preempted && step.chunks.length === 0 && step.decodes.length === this.#running.length) {
      step.iterations = this.#decodeSpan(step.decodes);
    }
    step.end = now + this.#spanMs(step, step.iterations);
    this.#step = step;
    return step.end;
  }

  /** A request arrived at `now` mid-step: stop a decode span after the iteration in progress. */
  interrupt(now: number): number {
    const step = this.#step;
    if (!step) throw new Error("interrupt() while idle");
    if (step.iterations === 1 || now >= step.end) return step.end;
    let t = step.start;
    let j = 0;
    do t += this.#iterationMs(step, j++);
    while (j < step.iterations && t < now);
    step.iterations = j;
    step.end = t;
    return t;
  }

  /**
   * Its client left: vLLM aborts a request whose connection closed, between steps. A waiting
   * request leaves the queue; a running one stops at the end of the step in progress and frees
   * its KV blocks then. Either way it never finishes (nor starts, if it had not).
   */
  abort(r: EngineRequest): void {
    if (r.aborted || !Number.isNaN(r.finishMs)) return;
    r.aborted = true;
    if (!this.#running.includes(r)) this.#abortedWaiting++;
    else if (!this.#step) this.#dropAborted();
  }

  /** Running requests whose client left release their blocks and leave the batch. */
  #dropAborted(): void {
    if (!this.#running.some((r) => r.aborted)) return;
    for (const r of this.#running) {
      if (!r.aborted) continue;
      this.cache.release(r.blocks);
      r.blocks = [];
    }
    this.#running = this.#running.filter((r) => !r.aborted);
  }

  /** Apply the planned step at its end; returns the requests that finished. */
  finish(): StepResult {
    const step = this.#step;
    if (!step) throw new Error("finish() while idle");
    this.#step = null;
    this.busyMs += step.end - step.start;
    if (step.chunks.length > 0) this.prefillBusyMs += step.end - step.start;
    const B = this.blockTokens;
    let prefilledTokens = 0;
    const started: EngineRequest[] = [];
    for (let i = 0; i < step.chunks.length; i++) {
      const r = step.chunks[i] as EngineRequest;
      const n = step.chunkTokens[i] as number;
      const before = r.computed;
      r.computed += n;
      prefilledTokens += n;
      this.#seal(r, Math.floor(before / B), Math.min(Math.floor(r.computed / B), r.hashes.length));
      if (r.computed !== r.promptTokens + r.generated) continue;
      if (r.generated === 0) started.push(r);
      // A request that recomputed after preemption has waited since its last token.
      else this.gaps.add(step.end - r.lastTokenMs, 1);
      this.#sample(r, 1, step.end, step.end - r.lastTokenMs);
    }
    // The span's first token comes after its first iteration; its longest iteration is its last.
    const first = step.start + this.#iterationMs(step, 0);
    const longest = step.iterations > 1 ? this.#iterationMs(step, step.iterations - 1) : 0;
    // Decodes that sampled in the same iteration before wait the same first gap: one entry each.
    let gap = Number.NaN;
    let waited = 0;
    for (const r of step.decodes) {
      r.computed += step.iterations;
      const need = Math.ceil(r.computed / B) - r.blocks.length;
      for (let k = 0; k < need; k++) r.blocks.push(this.cache.allocate());
      const g = first - r.lastTokenMs;
      if (g !== gap) {
        this.gaps.add(gap, waited);
        gap = g;
        waited = 0;
      }
      waited++;
      this.#sample(r, step.iterations, step.end, Math.max(g, longest));
    }
    this.gaps.add(gap, waited);
    for (let j = 1; j < step.iterations; j++) {
      this.gaps.add(this.#iterationMs(step, j), step.decodes.length);
    }
    this.#dropAborted();
    const done: EngineRequest[] = [];
    for (const r of this.#running) {
      if (r.generated < r.outputTokens) continue;
      r.finishMs = step.end;
      this.cache.release(r.blocks);
      r.blocks = [];
      done.push(r);
    }
    if (done.length > 0) this.#running = this.#running.filter((r) => r.generated < r.outputTokens);
    return { done, started: started.filter((r) => !r.aborted), prefilledTokens };
  }

  /** `tokens` output tokens, the last at `at`, the longest gap among them `gapMs`. */
  #sample(r: EngineRequest, tokens: number, at: number, gapMs: number): void {
    if (r.generated === 0) r.firstTokenMs = at;
    else r.maxGapMs = Math.max(r.maxGapMs, gapMs);
    r.lastTokenMs = at;
    r.generated += tokens;
  }

  #plan(step: Step, r: EngineRequest, tokens: number): void {
    if (tokens === 1 && r.generated > 0) {
      step.decodes.push(r);
      step.decodeContext += r.computed + 1;
    } else {
      step.chunks.push(r);
      step.chunkTokens.push(tokens);
      step.prefillComputeMs += prefillMs(this.profile, r.computed, tokens);
    }
  }

  /** Blocks for `r` up to `tokens`, preempting the newest running requests until they fit. */
  #reserve(r: EngineRequest, tokens: number): boolean {
    const need = Math.ceil(tokens / this.blockTokens) - r.blocks.length;
    while (need > this.cache.free) {
      const victim = this.#running.pop() as EngineRequest;
      this.cache.release(victim.blocks);
      victim.blocks = [];
      victim.computed = 0;
      if (!victim.aborted) this.#unshift(victim);
      this.preemptions++;
      if (victim === r) return false;
    }
    for (let k = 0; k < need; k++) r.blocks.push(this.cache.allocate());
    return true;
  }

  /** Admit waiting requests into the iteration while `budget` tokens remain. */
  #admit(step: Step, budget: number): void {
    const B = this.blockTokens;
    while (this.waiting > 0 && budget > 0 && this.#running.length < this.profile.maxSeqs) {
      const r = this.#waiting[this.#head] as EngineRequest;
      if (r.aborted) {
        this.#shift();
        this.#abortedWaiting--;
        continue;
      }
      const tokens = r.promptTokens + r.generated;
      const hit = this.cache.lookup(r.hashes, Math.floor((tokens - 1) / B));
      // KV a transfer delivered counts as computed, beyond what the cache already held.
      const loaded = Math.max(hit * B, r.remoteTokens);
      const want = Math.min(tokens - loaded, budget);
      const need = Math.ceil((loaded + want) / B) - hit;
      if (need > this.cache.free - this.cache.unpinnedAmong(r.hashes, hit)) break;
      this.cache.acquire(r.hashes, hit, r.blocks);
      for (let k = 0; k < need; k++) r.blocks.push(this.cache.allocate());
      this.#seal(r, hit, Math.min(Math.floor(loaded / B), r.hashes.length));
      r.computed = loaded;
      // A preempted request recomputes: the transferred KV is not sent twice.
      r.remoteTokens = 0;
      if (r.cachedTokens < 0) r.cachedTokens = loaded;
      this.#shift();
      this.#running.push(r);
      this.#plan(step, r, want);
      budget -= want;
    }
  }

  /** Identical decode-only iterations possible before a request finishes or blocks run out. */
  #decodeSpan(decodes: readonly EngineRequest[]): number {
    let finish = Number.POSITIVE_INFINITY;
    for (const r of decodes) finish = Math.min(finish, r.outputTokens - r.generated);
    const B = this.blockTokens;
    const extraBlocks = (k: number) => {
      let n = 0;
      for (const r of decodes) n += Math.ceil((r.computed + k) / B) - r.blocks.length;
      return n;
    };
    let lo = 1;
    let hi = finish;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (extraBlocks(mid) <= this.cache.free) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  #iterationMs(step: Step, j: number): number {
    const n = step.decodes.length;
    return iterationMs(this.profile, step.prefillComputeMs, n, step.decodeContext + j * n);
  }

  #spanMs(step: Step, iterations: number): number {
    let t = 0;
    for (let j = 0; j < iterations; j++) t += this.#iterationMs(step, j);
    return t;
  }

  #shift(): void {
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
  }

  #unshift(r: EngineRequest): void {
    if (this.#head > 0) this.#waiting[--this.#head] = r;
    else this.#waiting.unshift(r);
  }
}
