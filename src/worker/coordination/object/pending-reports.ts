/**
 * @module
 * Reports of finished requests the isolate could not give the pool's object (it routed alone
 * because the object was late, overloaded or failing, or a `complete` call failed). They wait
 * here and ride along with the pool's next successful completion, so the object's metrics
 * still count fallbacks without an extra call to an object that is already struggling.
 * Bounded per pool: past MAX_PENDING the oldest are dropped (the request log keeps every line).
 */
import type { RequestReport } from "../../request-record/request-report.ts";

export const MAX_PENDING = 256;

export class PendingReports {
  #byModel = new Map<string, RequestReport[]>();

  add(model: string, reports: readonly RequestReport[]): void {
    if (reports.length === 0) return;
    const list = this.#byModel.get(model) ?? [];
    list.push(...reports);
    if (list.length > MAX_PENDING) list.splice(0, list.length - MAX_PENDING);
    this.#byModel.set(model, list);
  }

  /** Everything waiting for `model`, removed. */
  take(model: string): RequestReport[] {
    const list = this.#byModel.get(model) ?? [];
    this.#byModel.delete(model);
    return list;
  }
}

/** One per isolate. */
export const pendingReports = new PendingReports();
