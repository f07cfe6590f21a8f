/**
 * @module
 * Reports of finished requests (request-record/request-report.ts) waiting to ride with a sync,
 * so the coordinator's metrics count every isolate's requests without a call of their own. They
 * are bound to batches as the replica's records are (src/core/edge/record-buffer.ts): the
 * reports that go with a new batch id go again, the same ones, with every retry of that batch,
 * and the coordinator counts them only when it applies the batch: once. A request's report is
 * added when its end record is queued, so both go in the same batch. Bounded like the records:
 * past `maxReports` waiting (a long coordinator outage) the oldest are dropped and counted.
 */
import { MAX_BATCH_RECORDS } from "../../../core/edge/record-buffer.ts";
import type { RequestReport } from "../../request-record/request-report.ts";

export class ReportBatches {
  readonly #maxReports: number;
  #waiting: RequestReport[] = [];
  #sent: { readonly batch: number; readonly reports: readonly RequestReport[] } | null = null;
  /** Reports dropped because too many waited. */
  dropped = 0;

  constructor(maxReports: number) {
    this.#maxReports = maxReports;
  }

  /** Reports waiting for a batch (not counting those sent and not yet acknowledged). */
  get size(): number {
    return this.#waiting.length;
  }

  add(report: RequestReport): void {
    this.#waiting.push(report);
    const excess = this.#waiting.length - this.#maxReports;
    if (excess > 0) {
      this.#waiting.splice(0, excess);
      this.dropped += excess;
    }
  }

  /** The reports that go with batch `id` (null: no batch, no reports). */
  forBatch(id: number | null): readonly RequestReport[] {
    if (id === null) return [];
    if (this.#sent?.batch === id) return this.#sent.reports;
    const reports = this.#waiting.splice(0, MAX_BATCH_RECORDS);
    this.#sent = { batch: id, reports };
    return reports;
  }

  /** The batch they went with was applied. */
  acknowledge(): void {
    this.#sent = null;
  }
}
