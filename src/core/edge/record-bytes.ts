/**
 * An upper bound on the bytes a coordinator's down record takes in an answer (V8's wire format,
 * which Workers RPC carries; sim/edge/wire-size.ts counts it exactly and its test checks this
 * bound). What caps an answer's records at `edge.answerMaxBytes` (edge-coordinator.ts): fields
 * and tags at most 64 bytes, the origin id one byte a character (ids are 1-64 ASCII
 * characters), each hash of a claim's run at most 9 (a double). A push frame goes as JSON
 * (push-frame.ts), where a hash (a 53-bit integer) takes up to 16 digits and a comma:
 * `downRecordJsonBytes` bounds that.
 */
import type { DownRecord } from "./sync-protocol.ts";

export function downRecordBytes(r: DownRecord): number {
  return 64 + r.origin.length + (r.t === "claim" ? 9 * r.run.length : 0);
}

/** The same bound for a record in a JSON push frame: up to 17 bytes a hash, 80 the rest. */
export function downRecordJsonBytes(r: DownRecord): number {
  return 80 + r.origin.length + (r.t === "claim" ? 17 * r.run.length : 0);
}
