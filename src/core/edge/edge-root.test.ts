import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { indexReader } from "../test-support/held-by.ts";
import { EdgeCoordinator } from "./edge-coordinator.ts";
import { EdgeReplica } from "./edge-replica.ts";
import { EdgeRoot } from "./edge-root.ts";

const pool = parsePool({
  origins: ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.test` })),
  policy: policyOf("cost"),
  coordination: "edge",
  edge: { coordinators: 2, rootIntervalMs: 500, chunkStride: 1 },
});

function prompt(c: number) {
  const hashes: number[] = [];
  let h = 3;
  for (let i = 0; i < 12; i++) {
    h = chainHash(h, c * 1000 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: 768 };
}

/** Two groups (a coordinator and a replica each) under one root. */
function twoGroups() {
  const root = new EdgeRoot(pool, { epoch: "r1" });
  const coordinators = ["east", "west"].map(
    (id) => new EdgeCoordinator(pool, { model: "m", epoch: `${id}-1`, id }),
  );
  const replicas = ["e0", "w0"].map((isolate) => new EdgeReplica(pool, { model: "m", isolate }));
  const sync = (g: number, now: number) => {
    const r = replicas[g] as EdgeReplica;
    const request = r.startSync(now);
    if (request) r.onAnswer((coordinators[g] as EdgeCoordinator).sync(request, now), now);
  };
  const exchange = (now: number) => {
    for (const c of coordinators) c.onRootAnswer(root.exchange(c.rootReport(now), now), now);
  };
  return { root, coordinators, replicas, sync, exchange };
}

const outstanding = (r: EdgeReplica, now: number) =>
  r.loads(now).reduce((n, o) => n + o.load.outstanding, 0);

describe("edge root", () => {
  it("each group's replicas read the other groups' load through the root", () => {
    const { replicas, sync, exchange } = twoGroups();
    const [east, west] = replicas as [EdgeReplica, EdgeReplica];
    sync(0, 0);
    sync(1, 0);
    for (let c = 0; c < 5; c++) east.route(prompt(c), 10);
    sync(0, 100);
    exchange(500);
    sync(1, 600);
    expect(outstanding(west, 600)).toBe(5);
    // Claims stay in their group.
    expect(indexReader(west.router)(prompt(0).chunkHashes)).toEqual({});
  });

  it("a group that stops reporting stops counting after three intervals", () => {
    const { root, coordinators, replicas, sync, exchange } = twoGroups();
    sync(0, 0);
    for (let c = 0; c < 5; c++) (replicas[0] as EdgeReplica).route(prompt(c), 10);
    sync(0, 100);
    exchange(500);
    const west = coordinators[1] as EdgeCoordinator;
    const answer = root.exchange(west.rootReport(1000), 1000);
    expect(answer.others.reduce((n, s) => n + s.outstanding, 0)).toBe(5);
    const later = root.exchange(west.rootReport(2100), 2100);
    expect(later.others).toEqual([]);
  });

  it("webhooks reach every replica: health, capacity and a cache reset", () => {
    const { root, replicas, sync, exchange } = twoGroups();
    const [east, west] = replicas as [EdgeReplica, EdgeReplica];
    sync(0, 0);
    sync(1, 0);
    const d = east.route(prompt(1), 10);
    sync(0, 20);
    expect(indexReader(east.router)(prompt(1).chunkHashes)).toEqual({ [d.origin as string]: 12 });
    root.ingest(d.origin as string, [{ type: "cache-reset" }], 30);
    root.ingest("b", [{ type: "health", status: "down" }], 30);
    root.ingest("c", [{ type: "capacity", kvCapacityTokens: 6400 }], 30);
    root.ingest("c", [{ type: "load", running: 3, waiting: 2, kvUsage: 0.5 }], 30);
    exchange(500);
    sync(0, 600);
    sync(1, 600);
    expect(indexReader(east.router)(prompt(1).chunkHashes)).toEqual({});
    for (const r of [east, west]) {
      const loads = new Map(r.loads(600).map((o) => [o.id, o.load]));
      expect(loads.get("b")?.eligible).toBe(false);
      expect(loads.get("c")?.engine).toMatchObject({ running: 3, waiting: 2 });
      const c = r.stats(600).origins.find((o) => o.id === "c");
      expect(c?.capacityTokens).toBe(6400);
      for (let k = 0; k < 10; k++) expect(r.route(prompt(100 + k), 700).origin).not.toBe("b");
    }
    // The same state again changes nothing: a reset is applied once.
    east.route(prompt(1), 800);
    sync(0, 900);
    exchange(1000);
    sync(0, 1100);
    expect(Object.keys(indexReader(east.router)(prompt(1).chunkHashes))).toHaveLength(1);
  });

  it("a restarted root's health is taken as it is: an origin it says is up comes back up", () => {
    // The origin went down under the first root; the root restarted (a new epoch, its facts
    // restated from storage: down), then the engine came back. Compared with a default of `up`
    // rather than with what the coordinator applied, the new root's `up` changed nothing and
    // the origin stayed down in the coordinator's group for good.
    const { root, coordinators, replicas, sync, exchange } = twoGroups();
    const [east] = replicas as [EdgeReplica];
    sync(0, 0);
    root.ingest("b", [{ type: "health", status: "down" }], 10);
    exchange(500);
    sync(0, 600);
    const eligible = (now: number) => east.loads(now).find((o) => o.id === "b")?.load.eligible;
    expect(eligible(600)).toBe(false);
    const restarted = new EdgeRoot(pool, { epoch: "r2" });
    restarted.ingest("b", [{ type: "health", status: "up" }], 700);
    for (const c of coordinators)
      c.onRootAnswer(restarted.exchange(c.rootReport(1000), 1000), 1000);
    sync(0, 1100);
    expect(eligible(1100)).toBe(true);
  });

  it("a measured prefill speed reaches every coordinator and replica with its age, once", () => {
    const { root, coordinators, replicas, sync, exchange } = twoGroups();
    sync(0, 0);
    sync(1, 0);
    root.ingest("c", [{ type: "prefill-rate", tokensPerSecond: 560, tokens: 3100 }], 30);
    exchange(500);
    sync(0, 600);
    sync(1, 600);
    const measured = { tokensPerSecond: 560, tokens: 3100, ageMs: 570 };
    for (const c of coordinators) {
      expect(c.stats(600).origins.find((o) => o.id === "c")?.measuredPrefill).toEqual(measured);
    }
    for (const r of replicas) {
      const c = r.loads(600).find((o) => o.id === "c");
      expect(c?.load.measuredPrefill).toEqual(measured);
    }
    // The coordinators learn from it, and their replicas take what they learned with the load.
    for (const c of coordinators) {
      expect(c.stats(600).origins.find((o) => o.id === "c")?.prefill.tokensPerSecond).toBe(560);
    }
    for (const r of replicas) expect(r.router.prefillSpeed("c")).toBe(560);
    // The root's same report, exchanged again, is not applied again (its age keeps growing).
    exchange(1000);
    const east = coordinators[0] as EdgeCoordinator;
    expect(east.stats(1000).origins.find((o) => o.id === "c")?.measuredPrefill?.ageMs).toBe(970);
  });
});
