/**
 * An upper bound on the bytes a coordinator's down record takes in an answer (V8's wire format,
 * which Workers RPC carries; sim/edge/wire-size.ts counts it exactly and its test checks this
 * bound). What caps an answer's records at `edge.answerMaxBytes` (edge-coordinator.ts): fields
 * and tags at most 64 bytes, the origin id one byte a character (ids are 1-64 ASCII
 * characters), each hash of a claim's run at most 9 (a double).
 */
import type { DownRecord } from "./sync-protocol.ts";

export function downRecordBytes(r: DownRecord): number {
  return 64 + r.origin.length + (r.t === "claim" ? 9 * r.run.length : 0);
}
