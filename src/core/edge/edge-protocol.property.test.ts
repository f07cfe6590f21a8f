/**
 * Property tests of edge coordination: any interleaving of routes, ends (success, failure
 * before the first byte, broken stream), reroutes, cancels and syncs over several replicas and
 * one coordinator, with answers lost at random (the replica then retries its batch) and the
 * coordinator's settings changed mid-run (a new `logMaxRecords` replaces its delta log).
 * - Exactly once: the coordinator applies every record the replicas batched, once, however
 *   many answers were lost; when every request has ended, nothing is outstanding anywhere.
 * - Convergence: once every replica has synced after the last record, each replica's index
 *   holds exactly what the coordinator's holds, prompt by prompt and origin by origin.
 * - Bounds: a replica's index never holds more than `replicaMaxChunks`, its queue never more
 *   than `bufferMaxRecords`, however long its coordinator stays away.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import type { FailureKind, Outcome } from "../router/router-types.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { PoolSettingsInput } from "../settings/settings-schema.ts";
import { indexReader } from "../test-support/held-by.ts";
import { EdgeCoordinator } from "./edge-coordinator.ts";
import { EdgeReplica } from "./edge-replica.ts";

const IDS = ["a", "b", "c", "d"];
const REPLICAS = 3;

/** Turn `t` of conversation `c` under system prompt `c % 3`: 4 shared chunks, 2 per turn. */
function prompt(c: number, t: number) {
  const hashes: number[] = [];
  let h = 11 + (c % 3);
  for (let i = 0; i < 4 + 2 * (t + 1); i++) {
    h = chainHash(h, i < 4 ? i : c * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: hashes.length * 64 + 7 };
}

type Op =
  | { op: "route"; r: number; c: number; t: number }
  | { op: "end"; r: number; k: number; how: "ok" | FailureKind | "stream" }
  | { op: "reroute"; r: number; k: number; next: number }
  | { op: "cancel"; r: number; k: number }
  | { op: "sync"; r: number; lose: boolean }
  | { op: "tick"; ms: number }
  | { op: "settings"; logMaxRecords: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("route" as const),
      r: fc.nat(REPLICAS - 1),
      c: fc.nat(7),
      t: fc.nat(3),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("end" as const),
      r: fc.nat(REPLICAS - 1),
      k: fc.nat(),
      how: fc.constantFrom("ok", "ok", "ok", "connect", "status-5xx", "stream") as fc.Arbitrary<
        "ok" | FailureKind | "stream"
      >,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("reroute" as const),
      r: fc.nat(REPLICAS - 1),
      k: fc.nat(),
      next: fc.nat(IDS.length - 1),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("cancel" as const),
      r: fc.nat(REPLICAS - 1),
      k: fc.nat(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("sync" as const),
      r: fc.nat(REPLICAS - 1),
      lose: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("tick" as const), ms: fc.nat(3000) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("settings" as const),
      logMaxRecords: fc.constantFrom(1000, 2000),
    }),
  },
);

function setup(policy: string, edge: PoolSettingsInput["edge"]) {
  const poolWith = (more: PoolSettingsInput["edge"]) =>
    parsePool({
      origins: IDS.map((id) => ({ id, url: `http://${id}.test` })),
      policy: policyOf(policy as "cost"),
      coordination: "edge",
      edge: { chunkStride: 1, ...edge, ...more },
    });
  const pool = poolWith({});
  const coordinator = new EdgeCoordinator(pool, { model: "m", epoch: "e", id: "c" });
  const replicas = Array.from(
    { length: REPLICAS },
    (_, i) => new EdgeReplica(pool, { model: "m", isolate: `i${i}` }),
  );
  const live = replicas.map(() => [] as string[]);
  let now = 0;
  const sync = (i: number, lose: boolean) => {
    const r = replicas[i] as EdgeReplica;
    const request = r.startSync(now);
    if (!request) return;
    const answer = coordinator.sync(structuredClone(request), now);
    if (lose) r.onFailure(now);
    else r.onAnswer(structuredClone(answer), now);
  };
  const run = (op: Op) => {
    now += 1;
    if (op.op === "tick") {
      now += op.ms;
      return;
    }
    if (op.op === "settings") {
      coordinator.applySettings(poolWith({ logMaxRecords: op.logMaxRecords }));
      return;
    }
    const r = replicas[op.r] as EdgeReplica;
    const mine = live[op.r] as string[];
    switch (op.op) {
      case "route": {
        const d = r.route(prompt(op.c, op.t), now);
        if (d.ticket) mine.push(d.ticket);
        return;
      }
      case "end": {
        if (mine.length === 0) return;
        const [ticket] = mine.splice(op.k % mine.length, 1) as [string];
        const outcome: Outcome =
          op.how === "ok"
            ? { ok: true }
            : op.how === "stream"
              ? { ok: false, failure: "stream" }
              : { ok: false, failure: op.how };
        r.complete(ticket, outcome, now);
        return;
      }
      case "reroute": {
        if (mine.length === 0) return;
        r.reroute(mine[op.k % mine.length] as string, "connect", IDS[op.next] as string, now);
        return;
      }
      case "cancel": {
        if (mine.length === 0) return;
        const [ticket] = mine.splice(op.k % mine.length, 1) as [string];
        r.cancel(ticket, now);
        return;
      }
      case "sync":
        sync(op.r, op.lose);
        return;
    }
  };
  /** Every request ends, then every replica syncs until nothing waits, then once more. */
  const settle = () => {
    live.forEach((mine, i) => {
      for (const ticket of mine.splice(0))
        (replicas[i] as EdgeReplica).complete(ticket, { ok: true }, now);
    });
    // Four rounds drain every queue (a few records each); the last round hears everything.
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < replicas.length; i++) sync(i, false);
    }
  };
  return { coordinator, replicas, run, settle, sync, now: () => now };
}

const policyArb = fc.constantFrom("cost", "least-outstanding", "prefix-hash", "round-robin");

describe("edge coordination (properties)", () => {
  it("applies every record once across lost answers, and replicas converge to the coordinator's index", () => {
    fc.assert(
      fc.property(policyArb, fc.array(opArb, { maxLength: 60 }), (policy, ops) => {
        const { coordinator, replicas, run, settle } = setup(policy, { flushRecords: 8 });
        for (const op of ops) run(op);
        settle();
        const batched = replicas.reduce((n, r) => n + r.counters.recordsBatched, 0);
        expect(coordinator.counters.recordsApplied).toBe(batched);
        expect(coordinator.router.outstanding).toBe(0);
        for (const r of replicas) expect(r.router.outstanding).toBe(0);
        const truth = indexReader(coordinator.router);
        for (const r of replicas) {
          const read = indexReader(r.router);
          for (let c = 0; c < 8; c++) {
            for (let t = 0; t < 4; t++) {
              const hashes = prompt(c, t).chunkHashes;
              expect(read(hashes), `${r.isolate} conversation ${c} turn ${t}`).toEqual(
                truth(hashes),
              );
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  it("a replica's index and queue stay within their caps while its coordinator is away", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ c: fc.nat(10_000), t: fc.nat(40), lose: fc.boolean() }), {
          minLength: 50,
          maxLength: 300,
        }),
        (routes) => {
          const { replicas, coordinator, sync, now } = setup("cost", {
            replicaMaxChunks: 1000,
            bufferMaxRecords: 100,
          });
          const [a, b] = replicas as [EdgeReplica, EdgeReplica];
          for (const { c, t, lose } of routes) {
            a.route(prompt(c, t), now());
            b.route(prompt(c + 1, t), now());
            if (lose) sync(0, true);
            else sync(1, false);
            expect(a.waiting.records).toBeLessThanOrEqual(100);
          }
          sync(0, false);
          for (const r of replicas) expect(r.stats(now()).index.chunks).toBeLessThanOrEqual(1000);
          expect(coordinator.stats(now()).index.chunks).toBeGreaterThan(1000);
        },
      ),
      { numRuns: 20 },
    );
  }, 60_000);
});
