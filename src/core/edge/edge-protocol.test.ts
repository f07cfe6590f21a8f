import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { CoreRouter } from "../router/core-router.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { PoolSettingsInput } from "../settings/settings-schema.ts";
import { indexReader } from "../test-support/held-by.ts";
import { EdgeCoordinator } from "./edge-coordinator.ts";
import { EdgeReplica } from "./edge-replica.ts";
import { downRecordBytes } from "./record-bytes.ts";
import type { SyncAnswer } from "./sync-protocol.ts";

const ORIGINS = ["a", "b", "c", "d"];

function pool(edge: PoolSettingsInput["edge"] = {}, extra: Partial<PoolSettingsInput> = {}) {
  return parsePool({
    origins: ORIGINS.map((id) => ({ id, url: `http://${id}.test` })),
    policy: policyOf("cost"),
    coordination: "edge",
    // Every chunk indexed, so small prompts show the protocol; the grain has its own test.
    edge: { chunkStride: 1, ...edge },
    ...extra,
  });
}

/** Turn `turn` of conversation `c`: 8 shared chunks, then 4 of its own per turn. */
function turn(c: number, t: number) {
  const hashes: number[] = [];
  let h = 5;
  for (let i = 0; i < 8 + 4 * (t + 1); i++) {
    h = chainHash(h, i < 8 ? i : c * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: hashes.length * 64 };
}

function cluster(
  replicas: number,
  edge: PoolSettingsInput["edge"] = {},
  extra: Partial<PoolSettingsInput> = {},
) {
  const p = pool(edge, extra);
  const coordinator = new EdgeCoordinator(p, { model: "m", epoch: "e1", id: "c0" });
  const isolates = Array.from(
    { length: replicas },
    (_, i) => new EdgeReplica(p, { model: "m", isolate: `i${i}` }),
  );
  /** One sync of replica `r` with `coordinator`, answered unless `lose`. */
  const sync = (r: EdgeReplica, now: number, lose = false, to = coordinator): SyncAnswer | null => {
    const request = r.startSync(now);
    if (!request) return null;
    const answer = to.sync(structuredClone(request), now);
    if (lose) r.onFailure(now);
    else r.onAnswer(structuredClone(answer), now);
    return answer;
  };
  return { pool: p, coordinator, isolates, sync };
}

describe("edge coordination", () => {
  it("one isolate's decision reaches another through one sync each: the next turn finds it", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    const first = a.route(turn(1, 0), 10);
    a.complete(first.ticket as string, { ok: true }, 20);
    sync(a, 30);
    sync(b, 40);
    const second = b.route(turn(1, 1), 50);
    expect(second.origin).toBe(first.origin);
    expect(second.matchedTokens).toBe(turn(1, 0).promptTokens);
    expect(second.reason).toBe("cache-hit");
  });

  it("a decision carries only the chunks past what its origin was believed to hold", () => {
    const { isolates, sync } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    a.route(turn(1, 0), 10);
    sync(a, 20);
    a.route(turn(1, 1), 30);
    const record = a.startSync(40)?.batch?.records[0];
    expect(record).toMatchObject({ t: "route", parent: turn(1, 0).chunkHashes.at(-1) });
    expect(record?.t === "route" && record.run).toEqual(turn(1, 1).chunkHashes.slice(-4));
  });

  it("counts each of an isolate's own claims once in its heat: one isolate routes as the one router", () => {
    // The defect: a replica's claim warmed its index when made and again when it came back in
    // the coordinator's log, so a shared prefix read hot after half the requests; `cost` then
    // priced replication at nothing and charged the holder's decode, and sent the fourth turn
    // elsewhere (capacity 0.88x object mode's on the capacity smoke run's seed 2).
    const { pool: p, isolates, sync } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    const object = new CoreRouter(p, { model: "m" });
    // Long prompts on one shared prefix, still running: the holder's decode load is large.
    for (let c = 1; c <= 5; c++) {
      const now = c * 5000;
      sync(a, now - 1);
      const edge = a.route(turn(c, 20), now);
      const one = object.route(turn(c, 20), now);
      expect([c, edge.reason, edge.matchedTokens]).toEqual([c, one.reason, one.matchedTokens]);
      sync(a, now + 1);
    }
  });

  it("a cold replica bootstraps from a bounded summary and then follows deltas", () => {
    const { isolates, sync, pool: p, coordinator } = cluster(1, { bootstrapMaxChunks: 1000 });
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    for (let c = 0; c < 200; c++) a.route(turn(c, 0), 10 + c);
    sync(a, 1000);
    const late = new EdgeReplica(p, { model: "m", isolate: "late" });
    const answer = sync(late, 2000);
    expect(answer?.bootstrap).toBeInstanceOf(Uint8Array);
    expect(late.stats(2000).index.chunks).toBeLessThanOrEqual(1000);
    // The most recent conversations made the cut.
    const read = indexReader(late.router);
    expect(Object.values(read(turn(199, 0).chunkHashes))).toContain(12);
    // From then on, deltas.
    a.route(turn(500, 0), 2100);
    sync(a, 2200);
    expect(sync(late, 2300)?.bootstrap).toBeNull();
    expect(indexReader(late.router)(turn(500, 0).chunkHashes)).toEqual(
      indexReader(coordinator.router)(turn(500, 0).chunkHashes),
    );
  });

  it("a sync whose answer was lost is sent again with the same batch and applied once", () => {
    const { isolates, coordinator, sync } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    a.route(turn(1, 0), 10);
    a.route(turn(2, 0), 11);
    const lost = sync(a, 20, true);
    expect(lost?.duplicate).toBe(false);
    expect(a.degraded).toBe(true);
    a.route(turn(3, 0), 30);
    const retry = sync(a, 40);
    expect(retry?.duplicate).toBe(true);
    expect(coordinator.router.outstanding).toBe(2);
    sync(a, 50);
    expect(coordinator.router.outstanding).toBe(3);
    expect(coordinator.counters.recordsApplied).toBe(a.counters.recordsBatched);
    expect(a.degraded).toBe(false);
  });

  it("a replica holding a version of a coordinator's earlier life gets a bootstrap", () => {
    const { isolates, sync, pool: p } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    a.route(turn(1, 0), 10);
    sync(a, 20);
    const restarted = new EdgeCoordinator(p, { model: "m", epoch: "e2", id: "c0" });
    const answer = sync(a, 30, false, restarted);
    expect(answer?.bootstrap).not.toBeNull();
    expect(answer?.epoch).toBe("e2");
  });

  it("a batch whose answer was lost across a coordinator restart is applied once by the new life", () => {
    const { isolates, coordinator, sync, pool: p } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    a.route(turn(1, 0), 10);
    a.route(turn(2, 0), 11);
    sync(a, 20, true);
    // The restarted object restores the index from its snapshot; its leases start empty.
    const restarted = new EdgeCoordinator(p, { model: "m", epoch: "e2", id: "c0" });
    restarted.restore(coordinator.snapshot());
    const retry = sync(a, 30, false, restarted);
    expect(retry?.duplicate).toBe(false);
    expect(restarted.router.outstanding).toBe(2);
    sync(a, 40, false, restarted);
    expect(restarted.router.outstanding).toBe(2);
  });

  it("the load vector counts every isolate's requests, and a replica adds its own since", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    const routed = Array.from({ length: 6 }, (_, c) => a.route(turn(c, 0), 10));
    sync(a, 20);
    sync(b, 30);
    b.route(turn(99, 0), 40);
    const total = (r: EdgeReplica) => r.loads(40).reduce((n, o) => n + o.load.outstanding, 0);
    // b's board holds its own lease only; its policy reads a's six through the vector.
    expect(b.stats(40).outstanding).toBe(1);
    expect(total(b)).toBe(7);
    // a's own records were acknowledged: counted once, in the vector.
    expect(total(a)).toBe(6);
    // Two end: a counts it at once, b once both have synced.
    for (const d of routed.slice(0, 2)) a.complete(d.ticket as string, { ok: true }, 50);
    expect(total(a)).toBe(4);
    expect(total(b)).toBe(7);
    sync(a, 60);
    sync(b, 70);
    expect(total(a)).toBe(4);
    expect(total(b)).toBe(5);
  });

  it("replicas reading one stale view do not all pick the origin it shows least loaded", () => {
    const { isolates, sync } = cluster(29, { flushMs: 2000 }, { prefillTokensPerSecond: 1000 });
    for (const r of isolates) sync(r, 0);
    // 16 conversations through one isolate, 4 per origin, then one ends: the view shows one
    // origin a request shallower than the others.
    const feeder = isolates[0] as EdgeReplica;
    const routed = Array.from({ length: 16 }, (_, c) => feeder.route(turn(1000 + c, 0), 900 + c));
    const shallow = routed[0] as (typeof routed)[number];
    feeder.complete(shallow.ticket as string, { ok: true }, 916);
    sync(feeder, 1000);
    for (const r of isolates) sync(r, 1000);
    // Four seconds later, 28 isolates each route a new conversation on that view at once.
    const where = new Map<string, number>();
    for (const r of isolates.slice(1)) {
      const d = r.route(turn(Number(r.isolate.slice(1)), 0), 5000);
      where.set(d.origin as string, (where.get(d.origin as string) ?? 0) + 1);
    }
    // Each alone would take the shallow origin: all 28 there. The draw among the best, in
    // proportion to what the others probably routed meanwhile, sends it well under that.
    expect(where.size).toBe(4);
    expect(where.get(shallow.origin as string)).toBeLessThan(28 * 0.75);
  });

  it("the replica's index never holds more than replicaMaxChunks", () => {
    const { isolates, sync } = cluster(2, { replicaMaxChunks: 1000 });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    for (let c = 0; c < 300; c++) a.route(turn(c, 2), c);
    sync(a, 400);
    sync(b, 500);
    expect(a.stats(500).index.chunks).toBeLessThanOrEqual(1000);
    expect(b.stats(500).index.chunks).toBeLessThanOrEqual(1000);
    expect(b.counters.claimsApplied).toBeGreaterThan(0);
  });

  it("asks to sync at once when cold, at flushRecords, after flushMs, and while warm", () => {
    const { isolates, sync } = cluster(1, { flushRecords: 3, flushMs: 100, warmMs: 1000 });
    const a = isolates[0] as EdgeReplica;
    expect(a.nextSyncAt(0)).toBe(0);
    sync(a, 0);
    expect(a.nextSyncAt(0)).toBeNull();
    a.route(turn(1, 0), 10);
    expect(a.nextSyncAt(10)).toBe(100);
    a.route(turn(2, 0), 11);
    a.route(turn(3, 0), 12);
    expect(a.nextSyncAt(12)).toBe(12);
    sync(a, 12);
    // Warm: every flushMs while within warmMs of the last request, nothing to report.
    expect(a.nextSyncAt(20)).toBe(112);
    sync(a, 1000);
    expect(a.nextSyncAt(1000)).toBeNull();
  });

  it("on the default grain, claims and matches go by whole strides of 8 chunks", () => {
    const { isolates, sync, coordinator } = cluster(2, { chunkStride: 8 });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    // 8 + 4 x 8 = 40 chunks: 5 strides.
    const first = a.route(turn(7, 7), 10);
    const request = a.startSync(20) as NonNullable<ReturnType<EdgeReplica["startSync"]>>;
    const record = request.batch?.records[0];
    expect(record?.t === "route" && record.run).toEqual(
      turn(7, 7).chunkHashes.filter((_, i) => i % 8 === 7),
    );
    a.onAnswer(coordinator.sync(request, 20), 20);
    sync(b, 40);
    // The next turn adds 4 chunks: still 5 whole strides, all held where the first went.
    const second = b.route(turn(7, 8), 50);
    expect(second.origin).toBe(first.origin);
    expect(second.matchedTokens).toBe(40 * 64);
  });
  it("through a coordinator outage, a conversation's turns routed by different isolates meet on one origin", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    // Six conversations under the shared 8-chunk prompt: both learn it is shared.
    for (let c = 0; c < 6; c++) {
      const d = a.route(turn(c, 0), 10 + c);
      a.complete(d.ticket as string, { ok: true }, 20 + c);
    }
    sync(a, 100);
    sync(b, 110);
    // The coordinator stops answering; past maxStalenessMs (5 s) each replica routes alone.
    sync(a, 200, true);
    sync(b, 200, true);
    // b has requests of its own in flight, which a cannot see.
    for (let c = 50; c < 53; c++) b.route(turn(c, 0), 6000 + c);
    let met = 0;
    for (let c = 100; c < 112; c++) {
      const first = a.route(turn(c, 0), 7000 + c);
      a.complete(first.ticket as string, { ok: true }, 7100 + c);
      const second = b.route(turn(c, 1), 7200 + c);
      b.complete(second.ticket as string, { ok: true }, 7300 + c);
      if (second.origin === first.origin) met++;
    }
    expect(met).toBe(12);
  });
  it("routing alone, a replica skips no origin for load the frozen vector shows from before the outage", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    for (let c = 0; c < 6; c++) {
      const d = a.route(turn(c, 0), 10 + c);
      a.complete(d.ticket as string, { ok: true }, 20 + c);
    }
    // Ten turns of one conversation in flight on its holder when the coordinator goes away.
    const holder = a.route(turn(1, 1), 30).origin;
    for (let t = 2; t < 12; t++) expect(a.route(turn(1, t), 30 + t).origin).toBe(holder);
    sync(a, 100);
    sync(b, 110);
    sync(b, 200, true);
    let toHolder = 0;
    for (let c = 100; c < 140; c++) {
      const d = b.route(turn(c, 0), 6000 + c);
      b.complete(d.ticket as string, { ok: true }, 6000 + c);
      if (d.origin === holder) toHolder++;
    }
    // Those ten may have ended long ago: the holder takes its share of keys (about a quarter).
    expect(toHolder).toBeGreaterThan(4);
  });
  it("an isolate idle past warmMs routes new prompts alone, not on the load its old view shows", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    for (let c = 0; c < 6; c++) {
      const d = a.route(turn(c, 0), 10 + c);
      a.complete(d.ticket as string, { ok: true }, 20 + c);
    }
    const holder = a.route(turn(1, 1), 30).origin;
    for (let t = 2; t < 12; t++) a.route(turn(1, t), 30 + t);
    sync(a, 100);
    sync(b, 110);
    // b hears nothing for 40 s (no request, so no sync); those ten ended long ago.
    let toHolder = 0;
    for (let c = 100; c < 140; c++) {
      const d = b.route(turn(c, 0), 40_000 + c);
      b.complete(d.ticket as string, { ok: true }, 40_000 + c);
      if (d.origin === holder) toHolder++;
    }
    expect(toHolder).toBeGreaterThan(4);
  });

  it("an isolate idle past warmMs syncs before it routes, rather than on a view older than maxStalenessMs", () => {
    const { isolates, sync } = cluster(2, { flushMs: 100, warmMs: 1000, maxStalenessMs: 5000 });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    // Cold: a first request waits for the bootstrap.
    expect(b.syncFirst(0)).toBe(true);
    sync(a, 0);
    sync(b, 0);
    expect(b.syncFirst(10)).toBe(false);
    // a sends a conversation to one origin; b idles long past warmMs and stops syncing.
    const holder = a.route(turn(7, 0), 10).origin;
    sync(a, 100);
    b.route(turn(8, 0), 20);
    sync(b, 120);
    sync(b, 1_000);
    expect(b.nextSyncAt(5_000)).toBeNull();
    expect(b.syncFirst(5_000)).toBe(false);
    // Its view is now over maxStalenessMs old: the next request waits for one sync, which is
    // due at once (not after flushMs), and after it b routes the next turn to its holder.
    expect(b.syncFirst(40_000)).toBe(true);
    expect(b.nextSyncAt(40_000)).toBe(40_000);
    sync(b, 40_000);
    expect(b.syncFirst(40_000)).toBe(false);
    expect(b.route(turn(7, 1), 40_001).origin).toBe(holder);
    // A coordinator known not to answer is not waited for: the replica routes alone.
    b.startSync(50_000);
    b.onFailure(50_000);
    expect(b.syncFirst(60_000)).toBe(false);
  });

  it("the coordinator learns bytes per token from every isolate's completions; replicas adopt it", () => {
    const { coordinator, isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    // Engines counting one token per byte (this project's llama.cpp engines), 4x bytes / 4.
    for (let k = 0; k < 300; k++) {
      const request = turn(k, 0);
      const promptBytes = request.promptTokens * 4;
      const d = a.route({ ...request, promptBytes }, 10 + k);
      a.complete(d.ticket as string, { ok: true, promptTokens: promptBytes }, 10 + k);
      if (k % 50 === 49) sync(a, 10 + k);
    }
    sync(a, 400);
    sync(b, 410);
    expect(coordinator.stats(410).bytesPerToken.bytesPerToken).toBeCloseTo(1, 1);
    // b routed nothing: its estimate of a 4,096-byte prompt is the coordinator's, not 1,024.
    const request = { ...turn(9_999, 0), promptBytes: 4096 };
    expect(b.promptTokens(request)).toBeGreaterThan(3_900);
  });

  it("deploy skew: an answer from a coordinator without the learners (no speed, no bytes per token) leaves the replica's values as they were", () => {
    const { coordinator, isolates } = cluster(1);
    const [a] = isolates as [EdgeReplica];
    const speeds = () => a.stats(0).origins.map((o) => o.prefill.tokensPerSecond);
    const answer = (now: number, old: boolean): SyncAnswer => {
      const request = a.startSync(now);
      if (!request) throw new Error("no sync due");
      const fresh = coordinator.sync(structuredClone(request), now);
      if (!old) return fresh;
      const { bytesPerToken: _, ...rest } = fresh;
      return { ...rest, load: fresh.load.map(({ speed: _s, ...e }) => e) };
    };
    a.onAnswer(answer(0, false), 0);
    // The coordinator adopts learned values (as from its snapshot) and sends them once.
    coordinator.router.adoptSpeed("a", { tokensPerSecond: 30_000, fixedMs: 5, samples: 64 }, 0);
    a.onAnswer(answer(100, false), 100);
    const before = speeds();
    expect(before[0]).toBe(30_000);
    coordinator.router.adoptSpeed("a", { tokensPerSecond: 50_000, fixedMs: 5, samples: 64 }, 100);
    a.onAnswer(answer(200, true), 200);
    expect(speeds()).toEqual(before);
    expect(a.promptTokens({ ...turn(1, 0), promptBytes: 4096 })).toBe(1024);
  });
});

describe("edge coordination: issue 23 defects", () => {
  it("defect A: two replicas with one isolate id: the second's records are dropped as duplicates", () => {
    // What a 32-bit id risked (replica-registry.test.ts checks the Worker now draws 128 bits).
    const p = pool();
    const coordinator = new EdgeCoordinator(p, { model: "m", epoch: "e1", id: "c0" });
    const [a, b] = [0, 1].map(() => new EdgeReplica(p, { model: "m", isolate: "same" })) as [
      EdgeReplica,
      EdgeReplica,
    ];
    const syncOf = (r: EdgeReplica, now: number) => {
      const request = r.startSync(now);
      if (!request) throw new Error("no sync");
      const answer = coordinator.sync(structuredClone(request), now);
      r.onAnswer(structuredClone(answer), now);
      return answer;
    };
    a.route(turn(1, 0), 0);
    a.route(turn(2, 0), 1);
    syncOf(a, 10);
    b.route(turn(3, 0), 20);
    expect(syncOf(b, 30).duplicate).toBe(true);
    expect(coordinator.router.outstanding).toBe(2);
    expect(coordinator.counters.recordsApplied).toBe(2);
  });

  it("defect B: a lagging replica's match is right after logMaxRecords changes (a new log is a new epoch)", () => {
    const { isolates, coordinator, sync } = cluster(2, { logMaxRecords: 1000 });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    const first = a.route(turn(1, 0), 10);
    a.complete(first.ticket as string, { ok: true }, 20);
    sync(a, 30);
    // The log is replaced: versions restart, so b's version would name the new log's records.
    coordinator.applySettings(pool({ logMaxRecords: 2000 }));
    a.route(turn(2, 0), 40);
    sync(a, 50);
    const answer = sync(b, 60);
    expect(answer?.bootstrap).not.toBeNull();
    const next = b.route(turn(1, 1), 70);
    expect(next.origin).toBe(first.origin);
    expect(next.matchedTokens).toBe(turn(1, 0).promptTokens);
  });

  it("defect E: an answer carries at most answerMaxBytes of records, and a lagging replica catches up", () => {
    const { isolates, coordinator, sync } = cluster(2, { answerMaxBytes: 16_384 });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    for (let c = 0; c < 400; c++) a.route(turn(c, 0), 10);
    sync(a, 20);
    let now = 30;
    let answers = 0;
    // b lagged by 400 claims (about 70 KB): it asks again at once until it has them all.
    do {
      const answer = sync(b, now) as SyncAnswer;
      const bytes = answer.records.reduce((n, r) => n + downRecordBytes(r), 0);
      expect(bytes).toBeLessThanOrEqual(16_384);
      answers++;
      now++;
    } while (b.nextSyncAt(now) === now && answers < 100);
    expect(answers).toBeGreaterThan(1);
    // Every answer to b but its last was cut (and a's own, which carried its 400 claims back).
    expect(coordinator.counters.capped).toBe(answers);
    const truth = indexReader(coordinator.router);
    const read = indexReader(b.router);
    for (let c = 0; c < 400; c++)
      expect(read(turn(c, 0).chunkHashes)).toEqual(truth(turn(c, 0).chunkHashes));
  });

  it("defect G: an answer carries only the load entries changed since the replica's last", () => {
    const { isolates, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    expect(sync(a, 0)?.load.map((e) => e.id)).toEqual(ORIGINS);
    sync(b, 0);
    // Nothing moved: nothing is sent (every answer carried the whole vector).
    expect(sync(a, 10)?.load).toEqual([]);
    const routed = b.route(turn(1, 0), 20);
    sync(b, 30);
    expect(sync(a, 40)?.load.map((e) => e.id)).toEqual([routed.origin]);
    // The entries a holds stay, the changed one replaced: a reads b's request.
    const outstanding = (r: EdgeReplica) => r.loads(50).map((o) => o.load.outstanding);
    expect(outstanding(a)).toEqual(outstanding(b));
    expect(outstanding(a).reduce((x, y) => x + y)).toBe(1);
  });

  it("defect D: a full buffer drops route records before end records, so no lease outlives its request", () => {
    const { isolates, coordinator, sync } = cluster(1, { bufferMaxRecords: 100 });
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    const sent = Array.from({ length: 50 }, (_, c) => a.route(turn(c, 0), 10).ticket as string);
    sync(a, 20);
    expect(coordinator.router.outstanding).toBe(50);
    // The coordinator stops answering: the 50 ends wait, then 200 more requests come, half of
    // them still running when it answers again.
    for (const ticket of sent) a.complete(ticket, { ok: true }, 30);
    const later = Array.from({ length: 200 }, (_, c) => a.route(turn(100 + c, 0), 40));
    for (const d of later.slice(0, 100)) a.complete(d.ticket as string, { ok: true }, 50);
    expect(a.waiting.records).toBeLessThanOrEqual(100);
    expect(a.waiting.dropped).toBeGreaterThan(0);
    for (let now = 60; a.waiting.records > 0 || a.nextSyncAt(now) === now; now += 10) {
      sync(a, now);
      if (now > 1000) break;
    }
    // Every request that ended is released at the coordinator; the running ones still count
    // at most once each, and their ends (routes never sent) are not sent either.
    expect(coordinator.router.outstanding).toBeLessThanOrEqual(100);
    for (const d of later.slice(100)) a.complete(d.ticket as string, { ok: true }, 2000);
    sync(a, 2010);
    expect(coordinator.router.outstanding).toBe(0);
  });
});

describe("edge coordination: a coordinator restart (issue 23, defect C)", () => {
  /** Each origin's requests in flight and tokens at `c`. */
  const board = (c: EdgeCoordinator, now: number) =>
    c.router.loads(now).map(({ id, load }) => [id, load.outstanding, load.activeTokens]);

  it("defect C: 40 requests in flight across a restart count again one sync after it is seen, and their ends release them", () => {
    const { isolates, coordinator, sync, pool: p } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    sync(a, 0);
    sync(b, 0);
    const sent = isolates.flatMap((r, i) =>
      Array.from({ length: 20 }, (_, c) => ({ r, d: r.route(turn(20 * i + c, 0), 10) })),
    );
    sync(a, 20);
    sync(b, 20);
    expect(coordinator.router.outstanding).toBe(40);
    const before = board(coordinator, 20);
    // A deploy: the object comes back with its index (the snapshot) and no leases.
    const restarted = new EdgeCoordinator(p, { model: "m", epoch: "e2", id: "c0" });
    restarted.restore(coordinator.snapshot());
    expect(restarted.router.outstanding).toBe(0);
    // Each replica's next answer shows the new life: its own requests count in its view at once,
    // and the sync that sends them again is due at once.
    sync(a, 30, false, restarted);
    sync(b, 30, false, restarted);
    const total = (r: EdgeReplica) => r.loads(31).reduce((n, o) => n + o.load.outstanding, 0);
    expect(total(a)).toBe(20);
    expect(a.nextSyncAt(31)).toBe(31);
    expect(b.nextSyncAt(31)).toBe(31);
    sync(a, 31, false, restarted);
    sync(b, 31, false, restarted);
    expect(restarted.router.outstanding).toBe(40);
    expect(board(restarted, 31)).toEqual(before);
    expect(a.counters.resent + b.counters.resent).toBe(40);
    // Not new decisions: the pool's rate counts none of them.
    expect(restarted.rootReport(31).rate.requestsPerSecond).toBe(0);
    // Their ends reach leases the new life holds: none is left counted.
    for (const { r, d } of sent) r.complete(d.ticket as string, { ok: true }, 40);
    sync(a, 50, false, restarted);
    sync(b, 50, false, restarted);
    expect(restarted.router.outstanding).toBe(0);
    expect(board(restarted, 50).every(([, n, tokens]) => n === 0 && tokens === 0)).toBe(true);
  });

  it("defect C: a request whose route the new life applied, or that ended, is not sent again", () => {
    const { isolates, coordinator, sync, pool: p } = cluster(1);
    const a = isolates[0] as EdgeReplica;
    sync(a, 0);
    const old = a.route(turn(1, 0), 10);
    const ended = a.route(turn(2, 0), 11);
    sync(a, 20);
    const restarted = new EdgeCoordinator(p, { model: "m", epoch: "e2", id: "c0" });
    restarted.restore(coordinator.snapshot());
    // Routed and ended while the restart is unseen: one new route and one end go in the batch
    // the new life applies with the answer that shows it.
    a.route(turn(3, 0), 25);
    a.complete(ended.ticket as string, { ok: true }, 26);
    sync(a, 30, false, restarted);
    expect(restarted.router.outstanding).toBe(1);
    sync(a, 31, false, restarted);
    expect(a.counters.resent).toBe(1);
    expect(restarted.router.outstanding).toBe(2);
    a.complete(old.ticket as string, { ok: true }, 40);
    sync(a, 50, false, restarted);
    expect(restarted.router.outstanding).toBe(1);
    // A new log in the same life (settings) keeps the leases: nothing is sent again.
    restarted.applySettings(pool({ logMaxRecords: 2000 }));
    a.route(turn(4, 0), 60);
    sync(a, 70, false, restarted);
    sync(a, 71, false, restarted);
    expect(a.counters.resent).toBe(1);
    expect(restarted.router.outstanding).toBe(2);
  });
});
