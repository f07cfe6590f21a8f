/**
 * @module
 * An isolate's push socket to its pool's coordinator (docs/architecture.md, "The Worker's edge
 * path"): opened by the sync loop (sync-loop.ts) inside the request whose `waitUntil` hosts the
 * loop, since a socket, like a stub, belongs to the request that made it; held while the
 * replica is warm; closed when the loop ends or a newer loop's socket takes over (handover,
 * which opens with the replica's view as `since`, so the coordinator's catch-up frame covers
 * the gap between the two).
 *
 * - Down: each frame (core/edge/push-frame.ts) goes to `EdgeReplica.onFrame` as it arrives; an
 *   acknowledged batch releases its reports. A frame that does not follow the view is a gap:
 *   the replica asks for a `sync` at once, which the loop sends.
 * - Up: `upload` sends the replica's batch with its reports and settings version.
 * - Closed (by either side, an error, a coordinator restart or newer settings): the replica
 *   stops pushing and falls back to `sync`; the loop opens another after SOCKET_RETRY_MS.
 */
import { decodeFrame } from "../../../core/edge/push-frame.ts";
import { SOCKET_RETRY_MS } from "../../../core/edge/push-timing.ts";
import { type PushUpload, pushQuery } from "../../objects/edge-rpc-types.ts";
import { coordinatorStub } from "../../objects/edge-stubs.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import type { EdgePool, PushSocket } from "./replica-registry.ts";

/** Whether the loop should open a socket now (push on, a view to follow, none of its own). */
export function wantsSocket(pool: EdgePool, mine: PushSocket | null, now: number): boolean {
  const { replica, ref } = pool;
  return (
    ref.pool.edge.push &&
    mine === null &&
    replica.since !== null &&
    !replica.degraded &&
    now >= pool.socketRetryAt &&
    now < replica.warmUntil
  );
}

/** Open a socket at the replica's view; null (and a retry later) when the coordinator refuses. */
export async function openSocket(pool: EdgePool, env: Env): Promise<PushSocket | null> {
  const { replica, ref, group } = pool;
  const since = replica.since;
  if (!since) return null;
  const stub = coordinatorStub(env, ref.model, ref.pool, group);
  let ws: WebSocket | null = null;
  try {
    const request = new Request(pushQuery(replica.isolate, since), {
      headers: { Upgrade: "websocket" },
    });
    const response = await withDeadline(stub.fetch(request), ref.pool.routeTimeoutMs);
    ws = response.webSocket;
  } catch (error) {
    console.warn(`edge ${ref.model}: push socket to coordinator ${group}: ${error}`);
  }
  if (!ws) {
    pool.socketRetryAt = Date.now() + SOCKET_RETRY_MS;
    return null;
  }
  ws.accept();
  const socket: PushSocket = { ws };
  ws.addEventListener("message", (event) => {
    const frame = typeof event.data === "string" ? decodeFrame(event.data) : null;
    if (!frame) return;
    const { acked } = replica.onFrame(frame, Date.now());
    if (acked) pool.reports.acknowledge();
    // The pool's load moved: held requests may fit now.
    pool.admission.pump(Date.now());
  });
  const closed = () => {
    if (pool.socket !== socket) return;
    pool.socket = null;
    replica.setPushing(false);
    pool.socketRetryAt = Date.now() + SOCKET_RETRY_MS;
  };
  ws.addEventListener("close", closed);
  ws.addEventListener("error", closed);
  const old = pool.socket;
  pool.socket = socket;
  replica.setPushing(true);
  if (old) closeSocket(pool, old);
  return socket;
}

/** Send the replica's batch up the socket if one is due; false when the socket failed. */
export function upload(pool: EdgePool, socket: PushSocket, now: number): boolean {
  const batch = pool.replica.startUpload(now);
  if (!batch) return true;
  const message: PushUpload = {
    t: "batch",
    version: pool.ref.version,
    isolate: pool.replica.isolate,
    batch,
    reports: pool.reports.forBatch(batch.id),
  };
  try {
    socket.ws.send(JSON.stringify(message));
    return true;
  } catch {
    closeSocket(pool, socket);
    return false;
  }
}

/** Close `socket`; if it is the pool's, the replica falls back to `sync`. */
export function closeSocket(pool: EdgePool, socket: PushSocket): void {
  if (pool.socket === socket) {
    pool.socket = null;
    pool.replica.setPushing(false);
  }
  try {
    socket.ws.close(1000, "done");
  } catch {}
}
