/**
 * The edge front's root (src/core/edge/edge-root.ts) on the replay's clock: each coordinator
 * exchanges with the root every `rootIntervalMs`, half a round trip each way (the root sits in
 * the topology's middle colo), until the replay's requests are done; an exchange during the
 * outage is skipped, an answer arriving in it is lost. Each exchange is one billed object
 * request; the engines' webhooks reach the root when the replay delivers them (edge-front.ts).
 */
import type { EdgeCoordinator } from "../../src/core/edge/edge-coordinator.ts";
import type { EdgeRoot } from "../../src/core/edge/edge-root.ts";
import { bump } from "./edge-counters.ts";
import type { EdgeWorld } from "./edge-world.ts";

/** Starts every coordinator's exchanges at 0; `done` says the replay has no requests left. */
export function startRootExchanges(world: EdgeWorld, root: EdgeRoot, done: () => boolean): void {
  const { env, topology, coordinators, counters: c, down } = world;
  const exchange = (g: number, t: number) => {
    if (done()) return;
    env.schedule(t + env.pool.edge.rootIntervalMs, (next) => exchange(g, next));
    if (down(t)) return;
    const coordinator = coordinators[g] as EdgeCoordinator;
    const oneWay = topology.rttMs(topology.coordinatorColo[g] as number, topology.rootColo) / 2;
    const report = coordinator.rootReport(t);
    env.schedule(t + oneWay, (at) => {
      c.rootExchanges++;
      bump(c.rootCallsPerSecond, at);
      bump(c.rootExchangesPerSecond, at);
      const answer = root.exchange(report, at);
      env.schedule(at + oneWay, (back) => {
        if (!down(back)) coordinator.onRootAnswer(answer, back);
      });
    });
  };
  for (let g = 0; g < coordinators.length; g++) exchange(g, 0);
}
