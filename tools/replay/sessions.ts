/**
 * A replayable slice of a Mooncake trace: whole conversations, not a time window. The first
 * minutes of the conversation trace hold mostly first turns (13% reuse in its first 400
 * requests), so a window would show little; taking every turn of some conversations keeps the
 * trace's real prefix sharing. The conversations are taken at an even stride over the whole
 * trace, not the earliest ones, whose first turns would all land in one burst at the start. A
 * conversation is the requests sharing their first two 512-token blocks (Mooncake's ids are
 * chained, so equal ids mean equal prefixes).
 */
import type { TraceRecord } from "../../sim/trace/trace.ts";

function sessionKey(r: TraceRecord): string {
  return r.blockIds.slice(0, 2).join(",");
}

/**
 * Whole conversations of at least two turns, every k-th in order of first appearance so they
 * span the trace, about `count` requests in all (cut to exactly `count`); in time order.
 */
export function conversations(records: readonly TraceRecord[], count: number): TraceRecord[] {
  const groups = new Map<string, TraceRecord[]>();
  for (const r of records) {
    const key = sessionKey(r);
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  const multi = [...groups.values()].filter((g) => g.length >= 2);
  const total = multi.reduce((n, g) => n + g.length, 0);
  // Take m conversations evenly spaced; grow m until they hold `count` requests.
  let m = Math.min(multi.length, Math.ceil((multi.length * count) / Math.max(1, total)));
  for (;;) {
    const chosen: TraceRecord[] = [];
    for (let j = 0; j < m; j++)
      chosen.push(...(multi[Math.floor((j * multi.length) / m)] as TraceRecord[]));
    if (chosen.length >= count || m === multi.length) {
      chosen.sort((a, b) => a.timestampMs - b.timestampMs);
      return chosen.slice(0, count);
    }
    m = Math.min(multi.length, m + Math.ceil((count - chosen.length) / 2));
  }
}
