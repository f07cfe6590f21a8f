/**
 * Edge coordination in workerd when its coordinator fails in the two ways a plain error does
 * not show: it hangs (a call that never answers), and it restarts (the object evicted: its
 * in-memory leases gone, issue 23, defect C). Isolates stand as `ReplicaRegistry`s syncing over
 * real RPC, as in edge-mode.test.ts.
 */
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { promptKey } from "../../../core/prompt/prompt-key.ts";
import type { PoolRef } from "../../objects/pool-stub.ts";
import {
  coordinatorState,
  edgePool,
  type Isolate,
  isolate,
  okReport,
  recordsArrive,
  ref,
  settle,
} from "../../test/edge-isolates.ts";
import { conversation, origin, pool, putSettings, waitFor } from "../../test/helpers.ts";
import type { Routed } from "../shared/routed.ts";
import { routeAtEdge } from "./route-at-edge.ts";
import { syncOnce } from "./sync-loop.ts";

const RESTART = "edge-restart";
const HANG = "edge-hang";
/** Syncs only when asked (warmMs 0) and soon (flushMs 10), so each test decides when. */
const EDGE = { flushMs: 10, warmMs: 0, rootIntervalMs: 50 };
/** The hang's deadline: short, so the test waits little. */
const ROUTE_TIMEOUT_MS = 300;

beforeAll(async () => {
  const origins = (tag: string) => [1, 2, 3, 4].map((n) => origin(`edge-${tag}-${n}`));
  await putSettings({
    pools: {
      [RESTART]: pool(origins("r"), { coordination: "edge", edge: EDGE }),
      [HANG]: pool(origins("x"), {
        coordination: "edge",
        edge: EDGE,
        routeTimeoutMs: ROUTE_TIMEOUT_MS,
      }),
    },
  });
});

function route(iso: Isolate, r: PoolRef, topic: string, e: Env = env): Promise<Routed> {
  const key = promptKey({ model: r.model, messages: conversation(topic, 0) });
  const request = { chunkHashes: key.chunkHashes, promptTokens: key.promptTokens };
  return routeAtEdge(e, iso.ctx, r, request, { registry: iso.registry });
}

/** Each origin's requests in flight at the coordinator, busy origins only. */
async function inFlight(model: string): Promise<[string, number][]> {
  const { router } = await coordinatorState(model);
  return router.origins.filter((o) => o.outstanding > 0).map((o) => [o.id, o.outstanding]);
}

/** An env whose coordinators take every call and never answer while `hang.on`. */
function withHang(): { env: Env; hang: { on: boolean } } {
  const hang = { on: true };
  const never = () => new Promise<never>(() => {});
  const COORDINATOR = {
    idFromName: (name: string) => env.COORDINATOR.idFromName(name),
    get: (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) =>
      hang.on ? { sync: never, applySettings: never } : env.COORDINATOR.get(id, options),
  };
  return { env: { ...env, COORDINATOR } as unknown as Env, hang };
}

describe("edge coordination when the coordinator fails", () => {
  it("defect C: an object restart loses its leases; the isolates' running requests count again after their next syncs, and their ends release them", async () => {
    const r = await ref(RESTART);
    const [a, b] = ["iso-restart-a", "iso-restart-b"].map(isolate) as [Isolate, Isolate];
    const sent: Routed[] = [];
    for (const [i, iso] of [a, b].entries()) {
      for (let n = 0; n < 3; n++) sent.push(await route(iso, r, `restart-${i}-${n}`));
      await settle(iso);
    }
    const before = await inFlight(RESTART);
    expect(before.reduce((s, [, n]) => s + n, 0)).toBe(6);
    const { epoch } = await coordinatorState(RESTART);
    // A deploy or an eviction: the object starts again, its index from storage, no leases.
    await evictDurableObject(env.COORDINATOR.getByName(`${RESTART}#0`));
    const restarted = await coordinatorState(RESTART);
    expect(restarted.epoch).not.toBe(epoch);
    expect(await inFlight(RESTART)).toEqual([]);
    // Each isolate's next answer shows the new life; the sync that sends its requests again
    // is due at once.
    for (const iso of [a, b]) {
      const held = edgePool(iso, r);
      await syncOnce(held, env);
      expect(held.replica.counters.restarts).toBe(1);
      expect(held.replica.nextSyncAt(Date.now())).toBeLessThanOrEqual(Date.now());
      await syncOnce(held, env);
    }
    expect(await inFlight(RESTART)).toEqual(before);
    // Their ends reach leases the new life holds: none is left counted.
    for (const { decision, ledger } of sent) {
      await ledger.complete(decision.ticket as string, okReport(decision));
    }
    await waitFor(
      async () => {
        for (const iso of [a, b]) await syncOnce(edgePool(iso, r), env);
        return (await inFlight(RESTART)).length === 0;
      },
      5000,
      "the ends to release every lease",
    );
    for (const iso of [a, b]) expect(edgePool(iso, r).replica.waiting.records).toBe(0);
  });

  it("a coordinator that hangs: a cold isolate routes within routeTimeoutMs, then at once; its records arrive once it answers", async () => {
    const r = await ref(HANG);
    const iso = isolate("iso-hang");
    const held = edgePool(iso, r);
    const { env: hung, hang } = withHang();
    // Cold: the first request waits for a bootstrap, but not past the pool's deadline.
    const started = Date.now();
    const first = await route(iso, r, "hang-1", hung);
    expect(first.decision.origin).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(ROUTE_TIMEOUT_MS + 1000);
    await waitFor(() => held.replica.degraded, 2000, "the hung sync to fail");
    // Known not to answer: the next request routes on the isolate's own view, waiting for none.
    expect(held.replica.syncFirst(Date.now())).toBe(false);
    const second = await route(iso, r, "hang-2", hung);
    expect(second.decision.origin).not.toBeNull();
    await first.ledger.complete(first.decision.ticket as string, okReport(first.decision));
    await second.ledger.complete(second.decision.ticket as string, okReport(second.decision));
    expect((await coordinatorState(HANG)).counters.recordsApplied).toBe(0);
    // It answers again: the records the isolate kept arrive, each applied once.
    hang.on = false;
    await recordsArrive(held, HANG);
    expect(held.replica.degraded).toBe(false);
    expect(held.replica.counters.bootstraps).toBe(1);
    expect(await inFlight(HANG)).toEqual([]);
    await settle(iso);
  });
});
