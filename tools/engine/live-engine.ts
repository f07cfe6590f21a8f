/**
 * The simulator's engine model (sim/engine, the same code the benchmark runs) driven by
 * the wall clock, so a real HTTP server can stream its tokens as they are "computed". Simulated
 * time runs `timeScale` times faster than the wall clock, so a demo of minutes of GPU time takes
 * seconds. Each step the model plans is slept for (scaled), then applied; new arrivals cut a
 * long decode span short exactly as the model allows (`interrupt`). A busy engine starts its
 * next step at the planned end of the last one, not when the timer happened to fire: timers run
 * late by a millisecond or more, which at a 4x time scale would add a third to every 10 ms
 * iteration and make the engine far slower than the model it runs.
 *
 * Requests are not aborted when a client leaves (the model has no abort); their tokens are
 * computed and dropped, which only makes the engine a little busier than vLLM would be.
 */
import { Engine, type EngineRequest, engineRequest } from "../../sim/engine/engine.ts";
import type { EngineProfile } from "../../sim/engine/profiles.ts";

export interface Progress {
  /** New tokens since the last call; `first` on the call that carries the first token. */
  onTokens(count: number, first: boolean): void;
  onDone(request: EngineRequest): void;
}

export interface LiveCounters {
  /** Prompt tokens of admitted requests (vLLM's prefix_cache_queries). */
  queriedTokens: number;
  /** Of which found in the prefix cache (vLLM's prefix_cache_hits). */
  hitTokens: number;
  finished: number;
}

export class LiveEngine {
  readonly engine: Engine;
  readonly timeScale: number;
  readonly counters: LiveCounters = { queriedTokens: 0, hitTokens: 0, finished: 0 };
  #t0 = performance.now();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #active = new Map<EngineRequest, { emitted: number; counted: boolean; progress: Progress }>();
  #nextId = 0;

  constructor(profile: EngineProfile, blockTokens: number, timeScale: number) {
    this.engine = new Engine(profile, blockTokens);
    this.timeScale = timeScale;
  }

  /** Simulated milliseconds since start. */
  now(): number {
    return (performance.now() - this.#t0) * this.timeScale;
  }

  /**
   * Queue a request; throws if it can never fit in the KV cache (vLLM rejects it too).
   * `remoteTokens`: leading prompt tokens whose KV a transfer delivered (a P/D decode engine).
   */
  submit(
    hashes: ArrayLike<number>,
    promptTokens: number,
    outputTokens: number,
    progress: Progress,
    { remoteTokens = 0 }: { remoteTokens?: number } = {},
  ): EngineRequest {
    const now = this.now();
    const id = this.#nextId++;
    const request = engineRequest(id, hashes, promptTokens, outputTokens, now, remoteTokens);
    this.engine.enqueue(request);
    this.#active.set(request, { emitted: 0, counted: false, progress });
    if (this.engine.busy) this.#wake(this.engine.interrupt(now));
    else this.#advance();
    return request;
  }

  get active(): number {
    return this.#active.size;
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #wake(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.#onStepEnd(at),
      Math.max(0, (at - this.now()) / this.timeScale),
    );
  }

  #onStepEnd(plannedEnd: number): void {
    this.#timer = null;
    const { done } = this.engine.finish();
    for (const [request, state] of this.#active) {
      if (!state.counted && request.cachedTokens >= 0) {
        state.counted = true;
        this.counters.queriedTokens += request.promptTokens;
        this.counters.hitTokens += request.cachedTokens;
      }
      if (request.generated > state.emitted) {
        state.progress.onTokens(request.generated - state.emitted, state.emitted === 0);
        state.emitted = request.generated;
      }
    }
    for (const request of done) {
      this.#active.get(request)?.progress.onDone(request);
      this.#active.delete(request);
      this.counters.finished++;
    }
    this.#advance(plannedEnd);
  }

  /** Plan the next step from `from` (the last step's planned end), or from now when idle. */
  #advance(from: number = this.now()): void {
    const end = this.engine.start(Math.min(from, this.now()));
    if (end !== null) this.#wake(end);
  }
}
