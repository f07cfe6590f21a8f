/**
 * Counters and a short ring of recent decisions, for `/admin/state`, metrics and the simulator's
 * reason counts. Bounded memory whatever the traffic.
 */
import type { PdReason } from "./disaggregation.ts";
import type { RecentDecision } from "./router-types.ts";

const RECENT = 50;

export class DecisionLog {
  total = 0;
  readonly byReason: Record<string, number> = {};
  readonly byPdReason: Partial<Record<PdReason, number>> = {};
  #recent: RecentDecision[] = [];
  #next = 0;

  record(decision: RecentDecision): void {
    this.total++;
    this.byReason[decision.reason] = (this.byReason[decision.reason] ?? 0) + 1;
    const pd = decision.pdReason;
    if (pd !== null) this.byPdReason[pd] = (this.byPdReason[pd] ?? 0) + 1;
    if (this.#recent.length < RECENT) this.#recent.push(decision);
    else this.#recent[this.#next] = decision;
    this.#next = (this.#next + 1) % RECENT;
  }

  /** Newest first. */
  recent(): RecentDecision[] {
    const n = this.#recent.length;
    const out: RecentDecision[] = [];
    for (let k = 1; k <= n; k++) out.push(this.#recent[(this.#next - k + n) % n] as RecentDecision);
    return out;
  }
}
