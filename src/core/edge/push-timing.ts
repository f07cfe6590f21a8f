/**
 * The timings of edge push, which the Worker runs (coordinator-object.ts, sync-loop.ts,
 * push-socket.ts) and the simulator models (sim/edge/push-model.ts): one place, so the model
 * cannot drift from what it models.
 */

/** A coordinator frames every socket this often while batches come. */
export const FRAME_TICK_MS = 20;
/** Its tick stops this long after the last batch or sync (the object may then hibernate). */
export const FRAME_IDLE_MS = 2000;
/** A request newer than an isolate's sync loop by this takes the loop (and a new socket) over. */
export const LOOP_HANDOVER_MS = 10_000;
/** A sync loop ends this long after it started, within `waitUntil`'s 30 s after the response. */
export const LOOP_MAX_MS = 25_000;
/** After a socket failed to open or closed, the next is tried this much later. */
export const SOCKET_RETRY_MS = 5000;
