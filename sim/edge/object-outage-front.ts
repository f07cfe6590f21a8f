/**
 * Object mode through an outage of the pool's Durable Object (degraded mode's other half): the
 * synchronous front (sim/fleet/routing-front.ts) whose object does not answer over [from, from +
 * duration). Requests then go to the Worker's fallback (`fallbackPool`: prefix-hash past the
 * shared prefix, one per isolate, here one for the whole pool, which flatters it: real isolates
 * each learn the shared prefix alone); the ends of requests the object routed wait and reach it
 * when it is back (the Worker's pending reports); webhooks sent meanwhile are lost (a reporter's
 * next interval brings fresh load).
 */

import { CoreRouter } from "../../src/core/router/core-router.ts";
import { fallbackPool } from "../../src/core/router/fallback-pool.ts";
import type { Outcome } from "../../src/core/router/router-types.ts";
import type { FrontFactory } from "../fleet/routing-front.ts";
import type { Outage } from "./edge-world.ts";

export function objectOutageFront(outage: Outage): FrontFactory {
  return (env) => {
    const router = new CoreRouter(env.pool, { model: env.model, seed: env.seed });
    const fallback = new CoreRouter(fallbackPool(env.pool), { model: env.model, seed: env.seed });
    const end = outage.fromMs + outage.durationMs;
    const down = (t: number) => t >= outage.fromMs && t < end;
    const tickets: (string | null)[] = new Array(env.size).fill(null);
    const byFallback = new Uint8Array(env.size);
    const waiting: { ticket: string; outcome: Outcome }[] = [];
    let fallbacks = 0;
    env.schedule(end, (t) => {
      for (const { ticket, outcome } of waiting.splice(0)) router.complete(ticket, outcome, t);
    });
    return {
      route(i, request, t) {
        let decision = down(t) ? null : router.route(request, t);
        if (decision?.origin == null) {
          fallbacks++;
          byFallback[i] = 1;
          decision = fallback.route(request, t);
        }
        tickets[i] = decision.ticket;
        return decision;
      },
      complete(i, outcome, t) {
        const ticket = tickets[i];
        if (ticket == null) return true;
        if (byFallback[i]) return fallback.complete(ticket, outcome, t);
        if (down(t)) {
          waiting.push({ ticket, outcome });
          return true;
        }
        return router.complete(ticket, outcome, t);
      },
      firstToken(i, t) {
        const ticket = tickets[i];
        if (ticket && !down(t)) (byFallback[i] ? fallback : router).firstToken(ticket, t);
      },
      ingest(id, events, t) {
        if (!down(t)) router.ingest(id, events, t);
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
}
