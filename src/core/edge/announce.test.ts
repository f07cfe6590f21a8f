import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { ANNOUNCE_RATIO, announces } from "./announce.ts";
import { EdgeCoordinator } from "./edge-coordinator.ts";
import { EdgeReplica } from "./edge-replica.ts";

const ORIGINS = ["a", "b", "c", "d"];
const FLUSH_MS = 100;

function cluster() {
  const p = parsePool({
    origins: ORIGINS.map((id) => ({ id, url: `http://${id}.test` })),
    policy: policyOf("cost"),
    coordination: "edge",
    edge: { chunkStride: 1, flushMs: FLUSH_MS },
  });
  const coordinator = new EdgeCoordinator(p, { model: "m", epoch: "e1", id: "c0" });
  const [a, b] = [0, 1].map((i) => new EdgeReplica(p, { model: "m", isolate: `i${i}` })) as [
    EdgeReplica,
    EdgeReplica,
  ];
  const sync = (r: EdgeReplica, now: number) => {
    const request = r.startSync(now);
    if (request) r.onAnswer(structuredClone(coordinator.sync(structuredClone(request), now)), now);
  };
  return { a, b, sync, coordinator };
}

/** A prompt of `chunks` 64-token chunks of its own (prefill 10,000 tokens/s by default). */
function prompt(seed: number, chunks: number) {
  const hashes: number[] = [];
  let h = seed;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, seed * 1_000_003 + i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: chunks * 64 };
}

describe("announcing a long prefill before it starts", () => {
  it("another isolate's request queues behind a long prefill it could not see (herd behind a long prefill)", () => {
    const { a, b, sync } = cluster();
    sync(a, 0);
    sync(b, 0);
    // 32,768 tokens: over 3 s of prefill, far past ANNOUNCE_RATIO x the 100 ms lag.
    const long = a.route(prompt(1, 512), 10);
    const ticket = long.ticket as string;
    // It does not start yet; its replica wants to sync soon: half a flush after its last sync.
    expect(a.startAt(ticket, 10)).toBeNull();
    expect(a.nextSyncAt(10)).toBe(FLUSH_MS / 2);
    sync(a, 50);
    // It starts a flush interval after the answer, by when b has synced once more.
    expect(a.startAt(ticket, 50)).toBe(50 + FLUSH_MS);
    sync(b, 100);
    // Before it starts, b sees it on its origin and sends a short request elsewhere.
    const short = b.route(prompt(2, 12), 105);
    expect(short.origin).not.toBe(long.origin);
    expect(a.startAt(ticket, 150)).toBe(150);
  });

  it("pushing, it starts with the frame that acknowledges it, which brought it to every other socket", () => {
    const { a, b, sync, coordinator } = cluster();
    sync(a, 0);
    sync(b, 0);
    a.setPushing(true);
    b.setPushing(true);
    const long = a.route(prompt(1, 512), 10);
    const ticket = long.ticket as string;
    expect(a.startAt(ticket, 10)).toBeNull();
    // Its batch goes up the socket at once.
    const batch = a.startUpload(10) ?? expect.fail("no batch went up");
    coordinator.upload(a.isolate, structuredClone(batch), 12);
    const frame = coordinator.frame(30) ?? expect.fail("no frame");
    b.onFrame(structuredClone(frame), 35);
    a.onFrame(structuredClone(frame), 35);
    // No flush interval after the frame: b has it already, and routes around it.
    expect(a.startAt(ticket, 35)).toBe(35);
    expect(b.route(prompt(2, 12), 36).origin).not.toBe(long.origin);
  });

  it("a short prefill starts at once and does not hurry the next sync", () => {
    const { a, sync } = cluster();
    sync(a, 0);
    const short = a.route(prompt(2, 12), 10);
    expect(a.startAt(short.ticket as string, 10)).toBe(10);
    expect(a.nextSyncAt(10)).toBeGreaterThan(10);
  });

  it("a failed sync releases what waited, and a degraded replica announces nothing", () => {
    const { a, sync } = cluster();
    sync(a, 0);
    const long = a.route(prompt(1, 512), 10);
    a.startSync(10);
    a.onFailure(20);
    expect(a.startAt(long.ticket as string, 20)).toBe(20);
    const next = a.route(prompt(3, 512), 30);
    expect(a.startAt(next.ticket as string, 30)).toBe(30);
  });

  it("announces exactly the prefills of at least ANNOUNCE_RATIO lags", () => {
    expect(announces(ANNOUNCE_RATIO * 200, 200)).toBe(true);
    expect(announces(ANNOUNCE_RATIO * 200 - 1, 200)).toBe(false);
    expect(announces(1e9, 0)).toBe(false);
  });
});
