/**
 * The load an edge replica's policy reads: the pool's last load vector (from its coordinator's
 * answers and frames) plus what this isolate did since that the vector cannot include: the
 * effects of its records not yet applied there. At each answer or frame the entries it carries
 * replace the held ones (it carries only those that changed: load-changes.ts) and the effects
 * restart from the records not yet applied (those of an acknowledged batch are in the vector).
 * So nothing is counted twice, and through an outage the replica reads the last vector plus its
 * own live requests since.
 *
 * The vector is read as it came, never drained further: others keep sending while this isolate
 * cannot see them, and the last reading is the best estimate of a steady pool's load (draining
 * it would show every origin idle a few seconds into an outage). Health and the engine's report
 * come from the vector (its age grows from when its entry arrived); circuits and in-flight chunks are
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
  /** Each origin's entry and when it arrived. */
  #vector = new Map<string, { entry: OriginLoadEntry; at: number }>();
  #at: number | null = null;
  #delta = new Map<string, RequestLoad>();

  /** When the view was last brought up to date; null before the first answer. */
  get at(): number | null {
    return this.#at;
  }

  /**
   * The view is up to date at `now`: `entries` replace the held ones (`whole`: the vector, the
   * others forgotten); `pending` are the effects of the records not yet applied.
   */
  rebase(
    entries: readonly OriginLoadEntry[],
    now: number,
    pending: Iterable<SignedEffect>,
    whole = false,
  ): void {
    if (whole) this.#vector.clear();
    for (const entry of entries) this.#vector.set(entry.id, { entry, at: now });
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
    const held = this.#vector.get(id);
    const v = held?.entry;
    const since = now - (held?.at ?? now);
    const d = this.#delta.get(id) ?? zero();
    let engine = null;
    let reportAgeMs = null;
    if (v?.engine) {
      reportAgeMs = v.engine.ageMs + since;
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
        ? { ...v.measuredPrefill, ageMs: v.measuredPrefill.ageMs + since }
        : own.measuredPrefill,
      consecutiveFailures: own.consecutiveFailures,
    };
  }
}
