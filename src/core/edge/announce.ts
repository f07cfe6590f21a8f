/**
 * Which decisions an edge replica announces before their origin fetch (docs/architecture.md,
 * "Edge coordination"): a long prefill waits until the other isolates can see it.
 *
 * Why: with a view a flush interval and a round trip old, the other isolates keep sending
 * requests to the origin a long prefill just took, because it looked the least loaded, and
 * each waits behind that prefill (an engine prefills in arrival order). In the simulator at
 * I = 32 this was the commonest cause of edge mode's slowest 2% of requests (a third to a half
 * of them queued behind one such prefill another isolate had sent within the view's lag;
 * bench/sim/README.md, "Why TTFT misses"). A central router sees it at once; a replica can make
 * the others see it before it starts: it syncs soon (`flushMs` / 2 after its last sync, so at
 * most twice as often as a warm replica does anyway: syncing at once for each cost 0.1 calls
 * per request at 10,000 requests/s) and the request starts `flushMs` after the answer (by when
 * every warm isolate of its group has synced once more).
 *
 * The wait (about a round trip and one or two flush intervals; `lagMs` is one of each) costs
 * the request itself about 1 / ANNOUNCE_RATIO of its own prefill time or less, so only
 * prefills at least ANNOUNCE_RATIO times the lag are announced (about a tenth of the
 * simulator's requests): each delayed little, each sparing the ones behind it.
 */

/** A prefill this many times the announcement's lag is announced first (3, 5 and 10 measured). */
export const ANNOUNCE_RATIO = 10;

/** Whether a decision whose prefill takes `prefillMs` is announced before it starts. */
export function announces(prefillMs: number, lagMs: number): boolean {
  return lagMs > 0 && prefillMs >= ANNOUNCE_RATIO * lagMs;
}
