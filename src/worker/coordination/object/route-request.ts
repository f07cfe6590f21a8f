/**
 * One routing decision for a request, from the pool's Durable Object when it answers within the
 * pool's `routeTimeoutMs`, else from the isolate's fallback router (docs/architecture.md, "One
 * request", steps 3-4). Either way the caller gets a `Ledger` to report failover and the
 * outcome to whichever router issued the ticket. The router degrades; it never fails a request
 * because its own state is unavailable.
 *
 * A pool with `admission` settings offers the request to its object's admission instead
 * (`admit`): it may wait there up to `queueTimeoutMs` more (the deadline grows by that), is
 * routed when it leaves the queue, or is shed, which the client gets as 429/503 with
 * `Retry-After` (shed-error.ts), never a fallback. It waits there under a name this Worker makes
 * (`waiterId`), never the client's `x-request-id`: a client may send the same id twice (a retry),
 * and two requests of one name would collide in the object's books. A client that leaves while
 * it waits (the request's abort signal) is answered `client_left` at once, without waiting for
 * the object, and frees its place (`leave`); had the object already routed it, the lease is
 * given back.
 *
 * Object errors: one retry with a fresh stub for errors Cloudflare marks `retryable`, never for
 * `overloaded` (retrying feeds the overload). A decision that arrives after the deadline holds a
 * lease the request will never use, so it is released at once rather than left to expire.
 */

import type { RouteRequest } from "../../../core/route-request.ts";
import type { CoreRouter } from "../../../core/router/core-router.ts";
import type { RouteDecision } from "../../../core/router/router-types.ts";
import {
  admitOnObject,
  type PoolRef,
  type PoolStub,
  poolStub,
  routeOnObject,
} from "../../objects/pool-stub.ts";
import type { Admitted } from "../../objects/rpc-types.ts";
import { DeadlineError, withDeadline } from "../../objects/with-deadline.ts";
import { routerOutcome } from "../../request-record/request-report.ts";
import { type Ledger, type Routed, type Waiter, waiterId } from "../shared/routed.ts";
import { clientLeftError, shedError } from "../shared/shed-error.ts";
import { fallbackRouters } from "./fallback-routers.ts";
import { pendingReports } from "./pending-reports.ts";

const OBJECT_MODE = { coordination: "object", viewAgeMs: null } as const;

interface ObjectError {
  retryable?: boolean;
  overloaded?: boolean;
}

export function objectLedger(stub: PoolStub, model: string): Ledger {
  // Bookkeeping must never fail a request that is already being served.
  const tryRecord = async <T>(what: string, call: () => Promise<T>): Promise<T | null> => {
    try {
      return await call();
    } catch (error) {
      console.warn(`router ${model}: ${what} not recorded: ${String(error)}`);
      return null;
    }
  };
  return {
    reroute: (ticket, failure, next) =>
      tryRecord("reroute", () => stub.reroute(ticket, failure, next)),
    prefillFailed: (ticket, failure) =>
      tryRecord("prefillFailed", () => stub.prefillFailed(ticket, failure)),
    complete: async (ticket, finished) => {
      const earlier = pendingReports.take(model);
      const recorded = await tryRecord("complete", () => stub.complete(ticket, finished, earlier));
      if (recorded === null) pendingReports.add(model, [finished, ...earlier]);
    },
    cancel: async (ticket) => {
      await tryRecord("cancel", () => stub.cancel(ticket));
    },
  };
}

function coreLedger(router: CoreRouter, model: string): Ledger {
  return {
    reroute: async (ticket, failure, next) => router.reroute(ticket, failure, next, Date.now()),
    prefillFailed: async (ticket, failure) => router.prefillFailed(ticket, failure, Date.now()),
    complete: async (ticket, finished) => {
      router.complete(ticket, routerOutcome(finished), Date.now());
      pendingReports.add(model, [finished]);
    },
    cancel: async (ticket) => {
      router.cancel(ticket, Date.now());
    },
  };
}

function fallbackReason(error: unknown): string {
  if (error instanceof DeadlineError) return "fallback-timeout";
  if ((error as ObjectError | null)?.overloaded) return "fallback-overloaded";
  return "fallback-error";
}

/** Resolves with "left" once `signal` aborts (at once if it has); `stop` ends the watch. */
function clientLeaves(signal: AbortSignal | undefined): {
  left: Promise<"left">;
  stop: () => void;
} {
  let stop = () => {};
  const left = new Promise<"left">((resolve) => {
    if (!signal) return;
    const abort = () => resolve("left");
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
    stop = () => signal.removeEventListener("abort", abort);
  });
  return { left, stop };
}

export async function routeRequest(
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  ref: PoolRef,
  request: RouteRequest,
  waiter?: Waiter,
): Promise<Routed> {
  let stub = poolStub(env, ref);
  const askedAt = Date.now();
  const admission = waiter ? ref.pool.admission : undefined;
  const heldAs = waiterId();
  const decide = (s: PoolStub): Promise<Admitted> =>
    admission
      ? admitOnObject(s, ref, heldAs, request)
      : routeOnObject(s, ref, request).then((decision) => ({
          kind: "routed",
          decision,
          waitedMs: 0,
        }));
  const ask = decide(stub).catch((error: ObjectError) => {
    if (!error?.retryable || error.overloaded) throw error;
    stub = poolStub(env, ref);
    return decide(stub);
  });
  // Give back a decision that arrives for nobody (late, or after its client left).
  const releaseLate = () =>
    ctx.waitUntil(
      ask.then(
        (late) => (late.kind === "routed" ? release(stub, late.decision) : undefined),
        () => undefined,
      ),
    );
  const leave = () => {
    ctx.waitUntil(stub.leave(heldAs).catch(() => false));
    releaseLate();
  };
  const client = clientLeaves(admission ? waiter?.signal : undefined);
  let admitted: Admitted | "left";
  try {
    const wait = ref.pool.routeTimeoutMs + (admission?.queueTimeoutMs ?? 0);
    admitted = await withDeadline(Promise.race([ask, client.left]), wait);
  } catch (error) {
    if (!(error instanceof DeadlineError)) {
      console.warn(`router ${ref.model}: object failed, routing alone: ${String(error)}`);
    }
    if (error instanceof DeadlineError && admission) leave();
    else releaseLate();
    return fallback(ref, request, fallbackReason(error));
  } finally {
    client.stop();
  }
  // The client left while it waited: answer now (the runtime may end this request any moment).
  if (admitted === "left" || admitted.kind === "left") {
    leave();
    throw clientLeftError();
  }
  if (admitted.kind === "shed") throw shedError(admitted.shed);
  const { decision } = admitted;
  const known = (id: string | undefined) =>
    id === undefined || ref.pool.origins.some((o) => o.id === id);
  if (decision.origin === null || (known(decision.origin) && known(decision.prefill?.origin))) {
    const objectMs = Date.now() - askedAt;
    const ledger = objectLedger(stub, ref.model);
    return { decision, ledger, objectMs, fallback: null, ...OBJECT_MODE };
  }
  // The object holds newer settings than this isolate: it chose an origin we cannot reach
  // (the decode origin or the prefill origin).
  ctx.waitUntil(release(stub, decision));
  return fallback(ref, request, "fallback-settings");
}

/** Give back the lease of a decision that will not be used. */
async function release(stub: PoolStub, decision: RouteDecision): Promise<void> {
  if (decision.ticket === null) return;
  try {
    await stub.cancel(decision.ticket);
  } catch {
    // The lease expires on its own.
  }
}

function fallback(ref: PoolRef, request: RouteRequest, reason: string): Routed {
  const router = fallbackRouters.get(ref.model, ref.pool, ref.version);
  const decision = router.route(request, Date.now());
  return {
    decision: { ...decision, reason },
    ledger: coreLedger(router, ref.model),
    objectMs: null,
    fallback: reason,
    ...OBJECT_MODE,
  };
}
