import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { EdgeCoordinator } from "../edge/edge-coordinator.ts";
import { EdgeReplica } from "../edge/edge-replica.ts";
import { policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { Admission, type Settled } from "./admission.ts";

/** An edge pool of two origins prefilling 1,000 tokens/s. */
const POOL = parsePool({
  origins: ["a", "b"].map((id) => ({ id, url: `http://${id}.test` })),
  policy: policyOf("cost"),
  prefillTokensPerSecond: 1000,
  coordination: "edge",
});

/** A prompt of 16 chunks (1,024 tokens) no other prompt shares. */
function prompt(family: number) {
  const hashes: number[] = [];
  let h = family * 7919 + 1;
  for (let i = 0; i < 16; i++) {
    h = chainHash(h, i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: 1024 };
}

function isolates() {
  const coordinator = new EdgeCoordinator(POOL, { model: "m", epoch: "e1", id: "c0" });
  const sync = (r: EdgeReplica, now: number) => {
    const request = r.startSync(now);
    if (request) r.onAnswer(structuredClone(coordinator.sync(structuredClone(request), now)), now);
  };
  const a = new EdgeReplica(POOL, { model: "m", isolate: "i0" });
  const b = new EdgeReplica(POOL, { model: "m", isolate: "i1" });
  sync(a, 0);
  sync(b, 0);
  return { a, b, sync };
}

const SETTINGS = { maxWaitMs: 500, queueTimeoutMs: 5000, maxQueued: 10 };

describe("Admission in edge mode (over an isolate's replica)", () => {
  it("holds a request when other isolates' requests fill the pool, seen through the coordinator", () => {
    const { a, b, sync } = isolates();
    const settled = new Map<string, Settled>();
    const admitA = new Admission(a, SETTINGS, (id, s) => settled.set(id, s));
    const admitB = new Admission(b, SETTINGS, (id, s) => settled.set(id, s));
    expect(admitA.offer("1", prompt(1), 10).kind).toBe("routed");
    expect(admitA.offer("2", prompt(2), 10).kind).toBe("routed");
    // Before syncing, b sees an idle pool: it would route at once.
    expect(b.waitMs(20, 1024)).toBe(0);
    sync(a, 20);
    sync(b, 30);
    // Now b sees both origins about a second busy: past the objective.
    expect(b.waitMs(40, 1024)).toBeGreaterThan(SETTINGS.maxWaitMs);
    expect(admitB.offer("3", prompt(3), 40)).toEqual({ kind: "queued" });
    expect(admitB.waiting).toBe(1);
  });

  it("routes a held request through the replica when it leaves, so its record reaches the coordinator", () => {
    const { a, b, sync } = isolates();
    const settled = new Map<string, Settled>();
    const admitA = new Admission(a, SETTINGS, () => {});
    const admitB = new Admission(b, SETTINGS, (id, s) => settled.set(id, s));
    const first = admitA.offer("1", prompt(1), 10);
    admitA.offer("2", prompt(2), 10);
    sync(a, 20);
    sync(b, 30);
    admitB.offer("3", prompt(3), 40);
    // The first request ends; once both replicas hear it, b has room and binds "3" then.
    if (first.kind !== "routed" || first.decision.ticket === null) throw new Error("not routed");
    a.complete(first.decision.ticket, { ok: true }, 50);
    sync(a, 60);
    sync(b, 70);
    admitB.pump(70);
    const third = settled.get("3");
    expect(third?.kind).toBe("routed");
    if (third?.kind !== "routed") return;
    expect(third.decision.origin).toBe(first.decision.origin);
    expect(third.waitedMs).toBe(30);
    expect(b.startSync(80)?.batch?.records.some((r) => r.t === "route")).toBe(true);
  });
});
