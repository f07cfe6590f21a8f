/**
 * @module
 * One routing decision in an edge-coordinated pool (docs/architecture.md, "The Worker's edge
 * path"): this isolate's replica decides at once, with no call before the origin fetch (but
 * for an isolate's first request, which waits for the pool's summary: a cold replica knows
 * nothing, and would send a conversation away from its cache; and for the first request after
 * the isolate idled past `warmMs`, whose view is too old to route on; and for a long prefill,
 * which starts once its record reached the other isolates: sync-loop.ts, `announced`), and
 * the request's records (its route, failovers, end or cancel) queue for the next sync, which
 * `pump` makes sure a live request's `waitUntil` will send. The `Ledger` it returns is what
 * forward/ reports to, as with the pool's object: failover and the end land in the replica,
 * and the end's report waits to ride with the batch that carries the end record.
 *
 * A pool with `admission` settings offers the request to the isolate's admission over its
 * replica (edge-admission.ts) instead: routed or shed at once (429/503 with `Retry-After`, as
 * in object mode: shed-error.ts), or held in this request until admission routes or sheds it.
 * While it waits, the request pumps admission and looks for its answer at admission's `wakeAt`
 * and every HELD_POLL_MS (Workers run timers only inside requests, and workerd does not let
 * another request's end resolve this one's promise), syncs every `edge.flushMs` so it hears
 * the other isolates' ends, and leaves the queue when its client's `signal` aborts.
 */
import type { Settled } from "../../../core/admission/admission.ts";
import type { RouteRequest } from "../../../core/route-request.ts";
import type { RouteDecision } from "../../../core/router/router-types.ts";
import { type ColoProperties, coloGroup } from "../../objects/colo-group.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import { routerOutcome } from "../../request-record/request-report.ts";
import { type Ledger, type Routed, type Waiter, waiterId } from "../shared/routed.ts";
import { clientLeftError, shedError } from "../shared/shed-error.ts";
import { type EdgePool, type ReplicaRegistry, replicaRegistry } from "./replica-registry.ts";
import { announced, pump, syncOnce, syncWithin } from "./sync-loop.ts";

export interface EdgeRouteOptions {
  /** The request's `cf` properties, which name its colo's group (absent in local runs). */
  readonly cf?: ColoProperties | undefined;
  /** This isolate's replicas (tests pass their own to stand for other isolates). */
  readonly registry?: ReplicaRegistry;
  /** Present when the request may wait in admission: its client's abort signal. */
  readonly waiter?: Waiter;
}

type Ctx = Pick<ExecutionContext, "waitUntil">;

/** A held request looks for its answer at least this often (another request's end frees room). */
const HELD_POLL_MS = 20;

export async function routeAtEdge(
  env: Env,
  ctx: Ctx,
  ref: PoolRef,
  request: RouteRequest,
  options: EdgeRouteOptions = {},
): Promise<Routed> {
  const registry = options.registry ?? replicaRegistry;
  const pool = registry.get(ref, coloGroup(options.cf, ref.pool.edge.coordinators));
  const { replica } = pool;
  // Cold, or idle past warmMs with a view too old to route on (and the last sync answered):
  // one sync first, bounded by the pool's routeTimeoutMs (EdgeReplica.syncFirst).
  if (replica.syncFirst(Date.now())) {
    await syncWithin(pool, env, Date.now() + ref.pool.routeTimeoutMs);
  }
  const decision = await decide(pool, env, request, options.waiter);
  // A long prefill starts once the other isolates can see it (core/edge/announce.ts).
  if (decision.ticket !== null) await announced(pool, env, decision.ticket);
  const now = Date.now();
  pump(pool, env, ctx, now);
  return {
    decision,
    ledger: edgeLedger(pool, env, ctx),
    objectMs: null,
    fallback: null,
    coordination: "edge",
    viewAgeMs: replica.viewAgeMs(now),
  };
}

/** The replica's decision, through admission when the pool has it (see the module comment). */
async function decide(
  pool: EdgePool,
  env: Env,
  request: RouteRequest,
  waiter: Waiter | undefined,
): Promise<RouteDecision> {
  const { admission, replica } = pool;
  if (!waiter || !admission.enabled) return replica.route(request, Date.now());
  // Named by this router, never by the client's x-request-id (routed.ts, `waiterId`).
  const id = waiterId();
  const settled =
    admission.offer(id, request, Date.now()) ?? (await held(pool, env, id, waiter.signal));
  if (settled === "left") throw clientLeftError();
  if (settled.kind === "shed") throw shedError(settled.shed);
  return settled.decision;
}

/**
 * Wait for a held request's answer: wake at admission's `wakeAt` or every HELD_POLL_MS (the end
 * that frees room is another request's, which cannot wake this one), pump, collect; sync every
 * `edge.flushMs` meanwhile; leave at once when the client aborts, even if another request's end
 * routed this one since it last looked (that lease goes back: EdgeAdmission.leave).
 */
async function held(
  pool: EdgePool,
  env: Env,
  id: string,
  signal: AbortSignal | undefined,
): Promise<Settled | "left"> {
  const { admission, replica } = pool;
  let aborted: () => void = () => {};
  const abort = new Promise<void>((resolve) => {
    aborted = resolve;
  });
  signal?.addEventListener("abort", aborted);
  try {
    for (;;) {
      const now = Date.now();
      if (signal?.aborted) {
        admission.leave(id, now);
        return "left";
      }
      admission.pump(now);
      const settled = admission.take(id);
      if (settled) return settled;
      const { flushMs } = pool.ref.pool.edge;
      const poll = now + Math.min(flushMs, HELD_POLL_MS);
      const wake = Math.min(admission.wakeAt(now) ?? poll, poll);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        abort,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.max(0, wake - now));
        }),
      ]);
      clearTimeout(timer);
      // Hear the other isolates' ends (not while degraded: the sync loop backs off then).
      const age = replica.viewAgeMs(Date.now());
      if (!replica.degraded && (age === null || age >= flushMs)) void syncOnce(pool, env);
    }
  } finally {
    signal?.removeEventListener("abort", aborted);
  }
}

export function edgeLedger(pool: EdgePool, env: Env, ctx: Ctx): Ledger {
  const { replica } = pool;
  const then = <T>(result: T): Promise<T> => {
    // Room may have freed: held requests first, then their records and this one's to the sync.
    pool.admission.pump(Date.now());
    pump(pool, env, ctx, Date.now());
    return Promise.resolve(result);
  };
  return {
    reroute: (ticket, failure, next) => then(replica.reroute(ticket, failure, next, Date.now())),
    // Edge pools have no prefill origins (edge-settings.ts refuses them): nothing to fail.
    prefillFailed: async () => null,
    complete: (ticket, report) => {
      replica.complete(ticket, routerOutcome(report), Date.now());
      pool.reports.add(report);
      return then(undefined);
    },
    cancel: (ticket) => {
      replica.cancel(ticket, Date.now());
      return then(undefined);
    },
  };
}
