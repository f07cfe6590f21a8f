/**
 * The load an edge replica's policy reads: the pool's last load vector (from its coordinator's
 * answer) plus what this isolate did since that the vector cannot include: the effects of its
 * records not yet acknowledged. At each answer the vector is replaced and the effects restart
 * from the records still waiting to be sent (those in the answered batch are in the vector).
 * So nothing is counted twice, and through an outage the replica reads the last vector plus its
 * own live requests since.
 *
 * The vector is read as it came, never drained further: others keep sending while this isolate
 * cannot see them, and the last reading is the best estimate of a steady pool's load (draining
 * it would show every origin idle a few seconds into an outage). Health and the engine's report
 * come from the vector (its age grows from the answer on); circuits and in-flight chunks are
 * this isolate's own. O(1) per record and per read; O(records waiting) per answer.
 */
import {
  type OriginLoadView,
  type RequestLoad,
  reportFreshness,
} from "../load-board/load-board.ts";
import type { OriginLoadEntry } from "./sync-protocol.ts";

/** What one request put on one origin, as the replica counted it when it routed it. */
export interface LoadEffect {
  readonly origin: string;
  readonly promptTokens: number;
  readonly uncachedTokens: number;
  /** Prefill work (prefill-work.ts). */
  readonly work: number;
}

/** An effect and whether it adds (1) or takes away (-1). */
export type SignedEffect = readonly [LoadEffect, 1 | -1];

const zero = (): RequestLoad => ({
  outstanding: 0,
  activeTokens: 0,
  prefillingTokens: 0,
  queuedPrefillTokens: 0,
});

export class LoadOverlay {
  #vector = new Map<string, OriginLoadEntry>();
  #at: number | null = null;
  #delta = new Map<string, RequestLoad>();

  /** When the vector arrived; null before the first answer. */
  get at(): number | null {
    return this.#at;
  }

  /** A new vector at `now`; `pending` are the effects of the records not yet sent. */
  rebase(vector: readonly OriginLoadEntry[], now: number, pending: Iterable<SignedEffect>): void {
    this.#vector = new Map(vector.map((e) => [e.id, e]));
    this.#at = now;
    this.#delta.clear();
    for (const [effect, sign] of pending) this.add(effect, sign);
  }

  add(effect: LoadEffect, sign: 1 | -1): void {
    let d = this.#delta.get(effect.origin);
    if (!d) {
      d = zero();
      this.#delta.set(effect.origin, d);
    }
    d.outstanding += sign;
    d.activeTokens += sign * effect.promptTokens;
    d.prefillingTokens += sign * effect.uncachedTokens;
    d.queuedPrefillTokens += sign * effect.work;
  }

  /** The origin's load: the vector plus this isolate's effects since, over its own reading. */
  view(
    id: string,
    own: OriginLoadView,
    now: number,
    fresh: { reportFreshMs: number; reportStaleMs: number },
  ): OriginLoadView {
    const v = this.#vector.get(id);
    const d = this.#delta.get(id) ?? zero();
    let engine = null;
    let reportAgeMs = null;
    if (v?.engine) {
      reportAgeMs = v.engine.ageMs + (now - (this.#at ?? now));
      const freshness = reportFreshness(reportAgeMs, fresh.reportFreshMs, fresh.reportStaleMs);
      const { running, waiting, kvUsage } = v.engine;
      if (freshness > 0) engine = { running, waiting, kvUsage, freshness };
    }
    return {
      outstanding: Math.max(0, (v?.outstanding ?? 0) + d.outstanding),
      activeTokens: Math.max(0, (v?.activeTokens ?? 0) + d.activeTokens),
      prefillingTokens: Math.max(0, (v?.prefillingTokens ?? 0) + d.prefillingTokens),
      queuedPrefillTokens: Math.max(0, (v?.queuedPrefillTokens ?? 0) + d.queuedPrefillTokens),
      activeChunks: own.activeChunks,
      engine,
      health: v?.health ?? own.health,
      circuit: own.circuit,
      eligible: (v?.eligible ?? true) && own.eligible,
      reportAgeMs,
      measuredPrefill: v?.measuredPrefill
        ? { ...v.measuredPrefill, ageMs: v.measuredPrefill.ageMs + (now - (this.#at ?? now)) }
        : own.measuredPrefill,
      consecutiveFailures: own.consecutiveFailures,
    };
  }
}
