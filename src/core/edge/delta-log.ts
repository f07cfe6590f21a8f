/**
 * A coordinator's recent claims, drops and resets, numbered: version v is the v-th record of
 * this coordinator's life (its epoch). A replica at version v gets every record after v, its
 * own included: it applied its own claims when it routed, and applying the log's copies again
 * (claims and drops are idempotent) puts every replica's index through the coordinator's order
 * of operations, so replicas that sync converge to the coordinator's index even where a claim
 * and another isolate's drop of the same prefix crossed. Only the last `capacity` records are
 * kept: a replica further behind, or from another epoch, gets a bootstrap instead
 * (edge-coordinator.ts). A read returns at most a byte budget's worth (`edge.answerMaxBytes`):
 * a reader far behind catches up over several reads. A ring buffer: O(1) per record,
 * O(records returned) per read.
 */
import { downRecordBytes } from "./record-bytes.ts";
import type { DownRecord } from "./sync-protocol.ts";

export class DeltaLog {
  readonly #capacity: number;
  readonly #records: (DownRecord | undefined)[];
  /** Version of the newest record (0: none yet). */
  #version = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#records = new Array(capacity);
  }

  get version(): number {
    return this.#version;
  }

  /** The oldest version a replica may hold and still get a delta. */
  get oldest(): number {
    return Math.max(0, this.#version - this.#capacity);
  }

  push(record: DownRecord): void {
    this.#version++;
    this.#records[this.#version % this.#capacity] = record;
  }

  /** Whether the records after `version` are all here. */
  covers(version: number): boolean {
    return Number.isInteger(version) && version >= this.oldest && version <= this.#version;
  }

  /**
   * The records after `version`, which the log must cover, in order, as many as fit in
   * `maxBytes` (`downRecordBytes` each, or `sizeOf` for another encoding; at least one, so a reader always moves on): the reader
   * then holds version `version + records.length` and asks again for the rest.
   */
  after(
    version: number,
    maxBytes = Number.POSITIVE_INFINITY,
    sizeOf: (r: DownRecord) => number = downRecordBytes,
  ): DownRecord[] {
    const out: DownRecord[] = [];
    let bytes = 0;
    for (let v = version + 1; v <= this.#version; v++) {
      const record = this.#records[v % this.#capacity] as DownRecord;
      bytes += sizeOf(record);
      if (bytes > maxBytes && out.length > 0) break;
      out.push(record);
    }
    return out;
  }
}
