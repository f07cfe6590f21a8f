/**
 * Who routes a replay's requests (fleet-sim.ts): the seam between the simulated fleet and the
 * router under test. The default front is the pool's one router, as the Durable Object holds it,
 * with the Worker's fallback for what it cannot place (`objectFront`); edge coordination's front
 * is many isolates' replicas syncing with coordinators (../edge/edge-front.ts). A front
 * may schedule events of its own (syncs, outages) on the replay's clock.
 *
 * The Worker has the same seam (src/worker/coordination/front.ts): a `PoolFront` per pool,
 * `objectFront` or `edgeFront`, whose `route` decides and `ingest` takes an engine's events.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";
import type { RouteRequest } from "../../src/core/route-request.ts";
import { CoreRouter } from "../../src/core/router/core-router.ts";
import { fallbackPool } from "../../src/core/router/fallback-pool.ts";
import type { Outcome, RouteDecision, RouterStats } from "../../src/core/router/router-types.ts";
import type { PoolSettings } from "../../src/core/settings/settings-schema.ts";

export interface FrontEnv {
  readonly pool: PoolSettings;
  readonly model: string;
  readonly seed: number;
  /** Requests in the replay (they are numbered 0..size-1 in arrival order). */
  readonly size: number;
  /** Run `fn` at simulated time `t` (after engine steps and deliveries due then). */
  schedule(t: number, fn: (t: number) => void): void;
  /**
   * Send request `i` where `decision` says, at `t`: for a request whose `route` returned null
   * (the front decided later; its TTFT counts the wait from its arrival).
   */
  place(i: number, decision: RouteDecision, t: number): void;
}

export interface PoolFront {
  /**
   * Route request `i`; the decision always names an origin (a front falls back itself). Null:
   * not yet (an edge isolate waiting for a sync, as the Worker's does); the front calls
   * `env.place` when it decides. Only replays without clients (admission) may defer.
   */
  route(i: number, request: RouteRequest, t: number): RouteDecision | null;
  /** Request `i` ended; false when its router no longer knew its ticket. */
  complete(i: number, outcome: Outcome, t: number): boolean;
  /** Request `i`'s first token came back (policies whose real router streams the tokens). */
  firstToken(i: number, t: number): void;
  /** Engine events for origin `id` reached the router (webhooks, KV events). */
  ingest(id: string, events: readonly EngineEvent[], t: number): void;
  /**
   * The pool's best origin's wait before a prefill starts (admission's gate, client-front.ts);
   * only the pool's one router has one to give the simulator's single admission.
   */
  waitMs?(t: number, meanWork: number): number;
  /** The router's estimate of each origin's queued prefill (diagnostics), in settings order. */
  queued(t: number): number[];
  /** Requests routed by a fallback (the pool's router could not place them). */
  readonly fallbacks: number;
  /** The figures of the router whose decisions the replay reports. */
  stats(t: number): RouterStats;
}

export type FrontFactory = (env: FrontEnv) => PoolFront;

/** The pool's one router (the Durable Object's) and the Worker's fallback for what it cannot place. */
export const objectFront: FrontFactory = (env) => {
  const router = new CoreRouter(env.pool, { model: env.model, seed: env.seed });
  const fallback = new CoreRouter(fallbackPool(env.pool), { model: env.model, seed: env.seed });
  /** Which router issued each request's ticket, and the ticket. */
  const routedBy: CoreRouter[] = new Array(env.size);
  const tickets: (string | null)[] = new Array(env.size).fill(null);
  let fallbacks = 0;
  return {
    route(i, request, t) {
      let decision = router.route(request, t);
      routedBy[i] = router;
      if (decision.origin === null) {
        // As the Worker does when the object cannot place a request: route alone.
        fallbacks++;
        decision = fallback.route(request, t);
        routedBy[i] = fallback;
      }
      tickets[i] = decision.ticket;
      return decision;
    },
    complete(i, outcome, t) {
      const ticket = tickets[i];
      return ticket == null || (routedBy[i] as CoreRouter).complete(ticket, outcome, t);
    },
    firstToken(i, t) {
      const ticket = tickets[i];
      if (ticket) (routedBy[i] as CoreRouter).firstToken(ticket, t);
    },
    ingest(id, events, t) {
      router.ingest(id, events, t);
    },
    waitMs(t, meanWork) {
      return router.waitMs(t, meanWork);
    },
    queued(t) {
      return router.stats(t).origins.map((o) => o.queuedPrefillTokens);
    },
    get fallbacks() {
      return fallbacks;
    },
    stats(t) {
      return router.stats(t);
    },
  };
};
