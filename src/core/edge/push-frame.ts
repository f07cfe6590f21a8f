/**
 * A push frame's bytes (docs/architecture.md, "Scale: two coordination modes"): the coordinator
 * encodes each tick's frame once (`EdgeCoordinator.frame`) and sends the same text to every
 * isolate's socket, never one message built per isolate. JSON: a WebSocket carries text, a
 * frame is plain data (numbers, strings, arrays), and a hash is an integer below 2^53, which
 * JSON keeps exactly. Its records are capped at `edge.answerMaxBytes` as JSON
 * (`downRecordJsonBytes`); the load entries, acknowledgements and the rest add at most a few
 * hundred bytes an origin (only the origins whose load changed: load-changes.ts).
 */
import type { PushFrame } from "./sync-protocol.ts";

/** The text every socket gets. */
export function encodeFrame(frame: PushFrame): string {
  return JSON.stringify({ t: "frame", ...frame });
}

/**
 * A frame from its text; null for anything else (a socket carries nothing else downward today,
 * and a message of a newer coordinator that this isolate cannot read is skipped, not fatal:
 * the replica's view then falls behind and a gap makes it sync).
 */
export function decodeFrame(text: string): PushFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || (value as { t?: unknown }).t !== "frame") {
    return null;
  }
  const { t: _, ...frame } = value as PushFrame & { t: string };
  const ok =
    typeof frame.epoch === "string" &&
    Number.isInteger(frame.from) &&
    Number.isInteger(frame.version) &&
    Number.isInteger(frame.loadFrom) &&
    Number.isInteger(frame.loadSeq) &&
    Array.isArray(frame.records) &&
    Array.isArray(frame.load) &&
    Array.isArray(frame.acks);
  return ok ? frame : null;
}
