/**
 * Push frames (issue 23, item 1): the coordinator builds one frame a tick and every socket gets
 * the same bytes; replicas send their batches up and read their acknowledgements in frames; a
 * replica that misses a frame finds a gap and syncs. Properties: frames applied in order (some
 * lost, the replica then syncing) leave every replica's index and load where syncs would: the
 * coordinator's.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import type { PoolSettingsInput } from "../settings/settings-schema.ts";
import { expectConverged, prompt } from "../test-support/edge-conversations.ts";
import { indexReader } from "../test-support/held-by.ts";
import { EdgeCoordinator } from "./edge-coordinator.ts";
import { EdgeReplica } from "./edge-replica.ts";
import { decodeFrame, encodeFrame } from "./push-frame.ts";
import { downRecordJsonBytes } from "./record-bytes.ts";

const IDS = ["a", "b", "c", "d"];

function cluster(replicas: number, edge: PoolSettingsInput["edge"] = {}) {
  const pool = parsePool({
    origins: IDS.map((id) => ({ id, url: `http://${id}.test` })),
    policy: policyOf("cost"),
    coordination: "edge",
    edge: { chunkStride: 1, flushRecords: 1, ...edge },
  });
  const coordinator = new EdgeCoordinator(pool, { model: "m", epoch: "e", id: "c" });
  const isolates = Array.from(
    { length: replicas },
    (_, i) => new EdgeReplica(pool, { model: "m", isolate: `i${i}` }),
  );
  const sync = (r: EdgeReplica, now: number) => {
    const request = r.startSync(now);
    if (request) r.onAnswer(structuredClone(coordinator.sync(structuredClone(request), now)), now);
  };
  /** Every replica syncs once (its bootstrap), then pushes. */
  for (const r of isolates) {
    sync(r, 0);
    r.setPushing(true);
  }
  /** Replica `r` sends its batch up its socket if one is due. */
  const upload = (r: EdgeReplica, now: number) => {
    const batch = r.startUpload(now);
    if (batch) coordinator.upload(r.isolate, structuredClone(batch), now);
  };
  /** One tick: one frame, its bytes to every replica not in `lost`; a gap makes it sync. */
  const tick = (now: number, lost: ReadonlySet<number> = new Set()) => {
    const frame = coordinator.frame(now);
    if (!frame) return null;
    const bytes = encodeFrame(frame);
    isolates.forEach((r, i) => {
      if (lost.has(i)) return;
      r.onFrame(decodeFrame(bytes) ?? expect.fail("undecodable frame"), now);
      if ((r.nextSyncAt(now) ?? Number.POSITIVE_INFINITY) <= now) sync(r, now);
    });
    return bytes;
  };
  return { pool, coordinator, isolates, sync, upload, tick };
}

describe("push frames", () => {
  it("one frame a tick, the same bytes to every socket, carries a batch sent up a socket to the others", () => {
    const { coordinator, isolates, upload, tick } = cluster(3);
    const [a, b, c] = isolates as [EdgeReplica, EdgeReplica, EdgeReplica];
    const first = a.route(prompt(1, 0), 10);
    upload(a, 10);
    const frames = coordinator.counters.frames;
    const bytes = tick(20);
    expect(coordinator.counters.frames).toBe(frames + 1);
    expect(bytes).toContain(`"i0"`);
    // a's batch was acknowledged by the frame: its request is counted once, in the vector.
    expect(a.loads(30).reduce((n, o) => n + o.load.outstanding, 0)).toBe(1);
    for (const r of [b, c]) {
      const next = r.route(prompt(1, 1), 30);
      expect(next.origin).toBe(first.origin);
      expect(next.reason).toBe("cache-hit");
    }
    expect(b.counters.syncs).toBe(1);
  });

  it("with nothing changed, no frame until flushMs has passed; then a heartbeat", () => {
    const { tick } = cluster(1, { flushMs: 100 });
    expect(tick(10)).not.toBeNull();
    expect(tick(50)).toBeNull();
    const heartbeat = decodeFrame(tick(120) as string);
    expect(heartbeat?.records).toEqual([]);
    expect(heartbeat?.load).toEqual([]);
  });

  it("a replica that missed a frame finds a gap, syncs at once, and follows frames again", () => {
    const { isolates, upload, tick, coordinator, sync } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    a.route(prompt(1, 0), 10);
    upload(a, 10);
    // b's copy of this frame is lost.
    tick(20, new Set([1]));
    a.route(prompt(2, 0), 30);
    upload(a, 30);
    const frame = decodeFrame(encodeFrame(coordinator.frame(40) ?? expect.fail("no frame")));
    expect(b.onFrame(frame ?? expect.fail(), 40)).toEqual({ applied: false, acked: false });
    expect(b.counters.gaps).toBe(1);
    expect(b.nextSyncAt(40)).toBe(40);
    const syncs = b.counters.syncs;
    sync(b, 40);
    expect(b.counters.syncs).toBe(syncs + 1);
    for (let c = 1; c <= 2; c++) {
      expect(indexReader(b.router)(prompt(c, 0).chunkHashes)).toEqual(
        indexReader(coordinator.router)(prompt(c, 0).chunkHashes),
      );
    }
    // Back on frames: the next one applies.
    a.route(prompt(4, 0), 70);
    upload(a, 70);
    tick(80);
    expect(b.counters.syncs).toBe(syncs + 1);
    expect(b.counters.gaps).toBe(1);
  });

  it("a frame's records stay within answerMaxBytes as JSON; the next frame carries the rest", () => {
    const { isolates, upload, tick, coordinator } = cluster(2, {
      answerMaxBytes: 16_384,
      flushRecords: 10_000,
    });
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    for (let c = 0; c < 400; c++) a.route(prompt(c, 3), 10);
    upload(a, 10_000);
    const frame = decodeFrame(tick(10_010) as string);
    expect(frame?.more).toBe(true);
    const json = JSON.stringify(frame?.records).length;
    expect(json).toBeLessThanOrEqual(16_384);
    expect(frame?.records.reduce((n, r) => n + downRecordJsonBytes(r), 0)).toBeGreaterThan(json);
    for (let t = 0; t < 10 && decodeFrame(tick(10_020 + t) ?? "")?.more; t++);
    expect(b.counters.gaps).toBe(0);
    const truth = indexReader(coordinator.router);
    for (let c = 0; c < 400; c += 37) {
      expect(indexReader(b.router)(prompt(c, 3).chunkHashes)).toEqual(
        truth(prompt(c, 3).chunkHashes),
      );
    }
  });

  it("a socket opened again at its view catches up on what it missed, and learns its batch was applied", () => {
    const { isolates, upload, tick, coordinator } = cluster(2);
    const [a, b] = isolates as [EdgeReplica, EdgeReplica];
    b.route(prompt(5, 0), 5);
    upload(b, 5);
    // b's socket closed before the frame: a handover opens a new one with b's view.
    a.route(prompt(1, 0), 10);
    upload(a, 10);
    tick(20, new Set([1]));
    const catchUp = coordinator.catchUp(b.isolate, b.since, 25);
    const frame = decodeFrame(encodeFrame(catchUp ?? expect.fail("no catch-up")));
    expect(b.onFrame(frame ?? expect.fail(), 25)).toEqual({ applied: true, acked: true });
    tick(30);
    expect(b.counters.gaps).toBe(0);
    expect(indexReader(b.router)(prompt(1, 0).chunkHashes)).toEqual(
      indexReader(coordinator.router)(prompt(1, 0).chunkHashes),
    );
    // A view of another life gets no catch-up (the replica syncs for a bootstrap).
    expect(coordinator.catchUp(b.isolate, { epoch: "other", version: 0, load: 0 }, 30)).toBeNull();
  });

  it("a sync answer older than a frame already applied set the view back: the next frame read as a gap", () => {
    // A socket and an RPC are two paths: b's sync is answered, then a frame built after that
    // answer reaches b first; the late answer comes after (a gap's sync, while b pushes).
    const { isolates, upload, tick, coordinator } = cluster(3);
    const [a, b, c] = isolates as [EdgeReplica, EdgeReplica, EdgeReplica];
    tick(5);
    const request = b.startSync(10) ?? expect.fail("no sync");
    const first = a.route(prompt(1, 0), 10);
    upload(a, 10);
    const answer = structuredClone(coordinator.sync(structuredClone(request), 12));
    // After the answer was built, the origin's load moves again.
    c.routeTo(first.origin ?? expect.fail("no origin"), prompt(3, 0), 14);
    upload(c, 14);
    const frame = decodeFrame(encodeFrame(coordinator.frame(20) ?? expect.fail("no frame")));
    for (const r of isolates) expect(r.onFrame(frame ?? expect.fail(), 21).applied).toBe(true);
    const claims = b.counters.claimsApplied;
    b.onAnswer(answer, 22);
    // The answer's records were in the frame, its load older: the view stays the frame's.
    expect(b.counters.claimsApplied).toBe(claims);
    expect(b.since).toEqual({ epoch: "e", version: frame?.version, load: frame?.loadSeq });
    const outstanding = (loads: { id: string; load: { outstanding: number } }[]) =>
      loads.map((l) => l.load.outstanding);
    expect(outstanding(b.loads(22))).toEqual(outstanding(coordinator.router.loads(22)));
    // The next frame follows: no gap, no sync while b pushes.
    a.route(prompt(2, 0), 30);
    upload(a, 30);
    tick(40);
    expect(b.counters.gaps).toBe(0);
    expect(b.nextSyncAt(40)).toBeNull();
    expectConverged(isolates, coordinator.router);
  });

  it("frames applied in order, some lost, leave every replica's index and load where the coordinator's are", () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant("route" as const), r: fc.nat(2), c: fc.nat(7), t: fc.nat(3) }),
      fc.record({ op: fc.constant("end" as const), r: fc.nat(2), k: fc.nat(), ok: fc.boolean() }),
      fc.record({ op: fc.constant("upload" as const), r: fc.nat(2) }),
      fc.record({
        op: fc.constant("tick" as const),
        lost: fc.subarray([0, 1, 2], { maxLength: 2 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const { isolates, upload, tick, coordinator } = cluster(3);
        const live = isolates.map(() => [] as string[]);
        let now = 1;
        for (const o of ops) {
          now += 7;
          const r = isolates[o.op === "tick" ? 0 : o.r] as EdgeReplica;
          if (o.op === "route") {
            const d = r.route(prompt(o.c, o.t), now);
            if (d.ticket) live[o.r]?.push(d.ticket);
          } else if (o.op === "end") {
            const mine = live[o.r] as string[];
            if (mine.length === 0) continue;
            const [ticket] = mine.splice(o.k % mine.length, 1) as [string];
            r.complete(ticket, o.ok ? { ok: true } : { ok: false, failure: "connect" }, now);
          } else if (o.op === "upload") {
            upload(r, now);
          } else {
            tick(now, new Set(o.lost));
          }
        }
        // Settle: the replicas' batches go up (a lost acknowledgement: again, after
        // routeTimeoutMs) and frames come down until nothing is left to send.
        for (let round = 0; round < 12; round++) {
          now += 3000;
          for (const r of isolates) upload(r, now);
          tick(now);
        }
        const outstanding = (loads: { id: string; load: { outstanding: number } }[]) =>
          loads.map((l) => l.load.outstanding);
        const truthLoad = outstanding(coordinator.router.loads(now));
        for (const [i, r] of isolates.entries()) {
          expect(r.waiting.records).toBe(0);
          // The coordinator's leases plus this replica's own still running: as the vector says.
          expect(outstanding(r.loads(now)), `replica ${i} load`).toEqual(truthLoad);
        }
        expectConverged(isolates, coordinator.router);
        const applied = coordinator.counters.recordsApplied;
        expect(applied).toBe(isolates.reduce((n, r) => n + r.counters.recordsBatched, 0));
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});
