/**
 * @module
 * When and how an isolate's replica syncs with its coordinator (docs/architecture.md, "The
 * Worker's edge path"). Workers run no timers between requests and an RPC stub dies with the
 * request that made it, so syncs run inside live requests' `waitUntil` (which lives up to 30 s
 * after the response):
 *
 * - `pump` is called by every routed request and every reported end. It starts a loop in this
 *   request's `waitUntil` unless one is running that started less than LOOP_HANDOVER_MS ago and
 *   wakes in time for what is due now. So the loop lives in a recent request (the newest,
 *   longest-lived context), and a burst of requests starts one loop, not one each.
 * - The loop asks the replica when it wants to sync (`nextSyncAt`: at once when cold, at
 *   `edge.flushRecords` records or `edge.flushMs` after the oldest, every `flushMs` for
 *   `edge.warmMs` after a request), sleeps until then, and syncs; it ends when nothing is due,
 *   when a newer loop took over, or LOOP_MAX_MS after it started (inside the 30 s).
 * - One sync: `startSync` (the batch, or the unacknowledged one again), the reports bound to
 *   that batch (report-batches.ts), one RPC `sync` to the group's coordinator with a new stub,
 *   within the pool's `routeTimeoutMs`. An answer is applied (`onAnswer`); an error or no
 *   answer in time is a failure (`onFailure`): the replica keeps routing on its own view and
 *   its records wait, bounded, for the next sync (degraded mode). A sync whose request died
 *   under it (its promise never settles) is declared failed by the next loop after the
 *   deadline plus ABANDON_GRACE_MS; its late answer, if any, is ignored, and the batch goes
 *   again under the same id, which the coordinator applies once.
 * - Announced first: a long prefill's request waits (`announced`) for the sync that carries its
 *   record and `flushMs` after its answer (`EdgeReplica.startAt`, core/edge/announce.ts), within
 *   the pool's `routeTimeoutMs`; a failed sync lets it go at once.
 * - Cold or idle: an isolate's first request for a pool waits for the bootstrap (`syncWithin`
 *   the pool's `routeTimeoutMs`) rather than route blind on an empty index, and so does
 *   the first request after the isolate idled past `warmMs` with a view older than
 *   `maxStalenessMs`; not while the coordinator is known not to answer (route-at-edge.ts).
 * - Push (`edge.push`, push-socket.ts): once the replica has a view, the loop opens one socket
 *   to its coordinator in its own request and holds it while the replica is warm; frames
 *   arrive on it, batches go up it (`nextUploadAt`), and `sync` is left for a cold start, a gap
 *   and a closed socket (`nextSyncAt` says when). A newer loop (handover) opens its own socket
 *   with the replica's view and the old loop closes its one as it ends.
 * - No promise crosses requests (issue 23, defect F): workerd drops a request's continuations
 *   once that request ends, so a promise made in one request (a sync it sent) may never settle
 *   for another that awaits it. A request that finds a sync in flight, whoever sent it, watches
 *   for it to settle on timers of its own (`waitForSync`, every SYNC_POLL_MS); a sync silent past
 *   its deadline plus ABANDON_GRACE_MS died with its request: the watcher declares it failed
 *   and sends its own.
 */

import { LOOP_HANDOVER_MS, LOOP_MAX_MS } from "../../../core/edge/push-timing.ts";
import type { SyncAnswer, SyncRequest } from "../../../core/edge/sync-protocol.ts";
import type { SyncCall } from "../../objects/edge-rpc-types.ts";
import { coordinatorStub } from "../../objects/edge-stubs.ts";
import { withSettings } from "../../objects/settings-first.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import { closeSocket, openSocket, upload as pushUpload, wantsSocket } from "./push-socket.ts";
import type { EdgePool, SyncLoop } from "./replica-registry.ts";

/** A sync silent this long past its deadline was lost with its request. */
export const ABANDON_GRACE_MS = 1000;
/** How often a request waiting for another's sync looks whether it settled. */
const SYNC_POLL_MS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Make sure a loop will run what `pool`'s replica wants synced (see the module comment). */
export function pump(
  pool: EdgePool,
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  now: number,
): void {
  const running = pool.loop;
  if (running && now - running.startedAt < LOOP_HANDOVER_MS) {
    const due = nextDue(pool, now);
    if (due === null || running.wakeAt === null || due >= running.wakeAt) return;
  }
  const loop: SyncLoop = { startedAt: now, wakeAt: null, socket: null };
  pool.loop = loop;
  ctx.waitUntil(run(pool, env, loop));
}

/** When the replica wants a sync, or (pushing) to send a batch up its socket; null: neither. */
function nextDue(pool: EdgePool, now: number): number | null {
  const { replica } = pool;
  const sync = replica.nextSyncAt(now);
  const upload = replica.nextUploadAt(now);
  if (sync === null) return upload;
  return upload === null ? sync : Math.min(sync, upload);
}

async function run(pool: EdgePool, env: Env, loop: SyncLoop): Promise<void> {
  const { replica } = pool;
  while (pool.loop === loop) {
    const now = Date.now();
    if (now - loop.startedAt > LOOP_MAX_MS) break;
    if (pool.inFlight) {
      // Another loop's or request's sync: watched on this loop's own timers.
      await waitForSync(pool, Number.POSITIVE_INFINITY);
      continue;
    }
    // Push: this request holds the pool's socket while the replica is warm (push-socket.ts).
    if (loop.socket && pool.socket !== loop.socket) loop.socket = null;
    if (wantsSocket(pool, loop.socket, now)) {
      loop.socket = await openSocket(pool, env);
      continue;
    }
    const sync = replica.nextSyncAt(now);
    if (sync !== null && sync <= now) {
      await syncOnce(pool, env);
      continue;
    }
    const upload = replica.nextUploadAt(now);
    if (loop.socket && upload !== null && upload <= now) {
      pushUpload(pool, loop.socket, now);
      continue;
    }
    const due = nextDue(pool, now);
    // Held open while warm: frames keep coming to this request's socket.
    const holding = loop.socket !== null && now < replica.warmUntil;
    if (due === null && !holding) break;
    const flushMs = pool.ref.pool.edge.flushMs;
    const wake = Math.min(
      due ?? Number.POSITIVE_INFINITY,
      holding ? now + flushMs : Number.POSITIVE_INFINITY,
    );
    loop.wakeAt = wake;
    await sleep(wake - now);
    loop.wakeAt = null;
  }
  if (loop.socket) closeSocket(pool, loop.socket);
  if (pool.loop === loop) pool.loop = null;
}

/**
 * Wait until request `ticket` may start its origin fetch (`EdgeReplica.startAt`): at once but
 * for a long prefill, which is announced first (see the module comment). Bounded by the pool's
 * `routeTimeoutMs`.
 */
export async function announced(pool: EdgePool, env: Env, ticket: string): Promise<void> {
  const deadline = Date.now() + pool.ref.pool.routeTimeoutMs;
  for (;;) {
    const now = Date.now();
    const at = pool.replica.startAt(ticket, now);
    if ((at !== null && at <= now) || now >= deadline) return;
    // Its record waits: send it (or wait for the sync in flight, then send it).
    if (at === null) await Promise.all([syncWithin(pool, env, deadline), sleep(1)]);
    else await sleep(Math.min(at, deadline) - now);
  }
}

/**
 * One sync of `pool`'s replica with its coordinator, now; while one is in flight already, that
 * one (whoever sent it) is waited for instead, on this request's own timers (`waitForSync`).
 */
export async function syncOnce(pool: EdgePool, env: Env): Promise<void> {
  await syncWithin(pool, env, Number.POSITIVE_INFINITY);
}

/**
 * `syncOnce`, waited for until `deadline` (ms) at most. Its own sync's promise is awaited;
 * another request's never is (see the module comment).
 */
export async function syncWithin(pool: EdgePool, env: Env, deadline: number): Promise<void> {
  if (pool.inFlight) {
    await waitForSync(pool, deadline);
    if (pool.inFlight || Date.now() >= deadline) return;
  }
  const request = pool.replica.startSync(Date.now());
  if (!request) return;
  const token = {};
  pool.inFlight = { token, startedAt: Date.now() };
  const done = exchange(pool, env, request, token);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const due = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, Math.min(deadline - Date.now(), 2 ** 31 - 1)));
  });
  await Promise.race([done, due]);
  clearTimeout(timer);
}

/**
 * Until the sync in flight settles (whoever sent it) or `deadline`, looking every SYNC_POLL_MS
 * on this request's timers; a sync silent past its deadline plus ABANDON_GRACE_MS died with
 * the request that sent it: it is declared failed here (its late answer, if any, is ignored,
 * and its batch goes again under the same id, which the coordinator applies once).
 */
async function waitForSync(pool: EdgePool, deadline: number): Promise<void> {
  const watched = pool.inFlight;
  while (watched && pool.inFlight === watched) {
    const now = Date.now();
    if (now - watched.startedAt > pool.ref.pool.routeTimeoutMs + ABANDON_GRACE_MS) {
      pool.inFlight = null;
      pool.replica.onFailure(now);
      return;
    }
    if (now >= deadline) return;
    await sleep(Math.min(SYNC_POLL_MS, deadline - now));
  }
}

async function exchange(
  pool: EdgePool,
  env: Env,
  request: SyncRequest,
  token: object,
): Promise<void> {
  const { replica, reports, ref, group } = pool;
  const call: SyncCall = {
    version: ref.version,
    request,
    reports: reports.forBatch(request.batch?.id ?? null),
  };
  let answer: SyncAnswer | null = null;
  try {
    answer = await withDeadline(syncOnCoordinator(env, pool, call), ref.pool.routeTimeoutMs);
  } catch (error) {
    if (pool.inFlight?.token === token) {
      console.warn(`edge ${ref.model}: sync with coordinator ${group} failed: ${error}`);
    }
  }
  if (pool.inFlight?.token !== token) return;
  pool.inFlight = null;
  if (answer) {
    replica.onAnswer(answer, Date.now());
    reports.acknowledge();
    // The pool's load as the coordinator saw it: held requests may fit now.
    pool.admission.pump(Date.now());
  } else {
    replica.onFailure(Date.now());
  }
}

/** The sync RPC, bringing the coordinator the pool's settings first if it asks for them. */
async function syncOnCoordinator(env: Env, pool: EdgePool, call: SyncCall): Promise<SyncAnswer> {
  const { ref, group } = pool;
  const stub = coordinatorStub(env, ref.model, ref.pool, group);
  return withSettings(
    () => stub.sync(call),
    () => stub.applySettings(ref.model, ref.pool, ref.version, group),
    `coordinator ${group} of ${ref.model}`,
  );
}
