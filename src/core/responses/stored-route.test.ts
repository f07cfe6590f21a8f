import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { EdgeCoordinator } from "../edge/edge-coordinator.ts";
import { EdgeReplica } from "../edge/edge-replica.ts";
import { policyOf } from "../policies/index.ts";
import { CoreRouter } from "../router/core-router.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { STORED_RESPONSE_REASON, storedRoute } from "./stored-route.ts";

const origins = ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.test` }));

function router() {
  return new CoreRouter(parsePool({ origins, policy: policyOf("prefix-hash") }), { model: "m" });
}

function prompt(chunks: number) {
  const chunkHashes: number[] = [];
  let h = 7;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i);
    chunkHashes.push(h);
  }
  return { chunkHashes, promptTokens: chunks * 64 };
}

const stored = (origin: string) => ({ id: "resp_1", origin, at: 0 });

describe("storedRoute", () => {
  it("leases the storing origin, whatever the policy would pick, with no alternates", () => {
    const r = router();
    const request = prompt(8);
    const policyPick = r.route(request, 0);
    r.cancel(policyPick.ticket as string, 0);
    const other = origins.find((o) => o.id !== policyPick.origin)?.id as string;
    const routed = storedRoute(r, stored(other), request, "pin-1", 1);
    expect(routed).toMatchObject({
      kind: "routed",
      decision: { origin: other, alternates: [], reason: STORED_RESPONSE_REASON, ticket: "pin-1" },
    });
    expect(r.outstanding).toBe(1);
    // The prompt is claimed there: the next turn sees it held.
    r.complete("pin-1", { ok: true }, 2);
    const again = storedRoute(r, stored(other), prompt(10), "pin-2", 3);
    expect(again.kind === "routed" && again.decision.matchedTokens).toBe(8 * 64);
  });

  it("refuses an unknown id, an origin gone from settings, a draining or down origin", () => {
    const r = router();
    expect(storedRoute(r, null, prompt(2), "t", 0)).toEqual({ kind: "unknown" });
    expect(storedRoute(r, stored("z"), prompt(2), "t", 0)).toEqual({ kind: "gone", origin: "z" });
    r.ingest("b", [{ type: "health", status: "draining" }], 0);
    expect(storedRoute(r, stored("b"), prompt(2), "t", 0)).toEqual({
      kind: "unavailable",
      origin: "b",
      why: "draining",
    });
    expect(r.outstanding).toBe(0);
  });
});

describe("EdgeReplica.routeTo", () => {
  it("leases the pinned origin and the other isolates see it after a sync each", () => {
    const p = parsePool({
      origins,
      policy: policyOf("round-robin"),
      coordination: "edge",
      edge: { chunkStride: 1 },
    });
    const coordinator = new EdgeCoordinator(p, { model: "m", epoch: "e1", id: "c0" });
    const [a, b] = ["ia", "ib"].map((isolate) => new EdgeReplica(p, { model: "m", isolate }));
    const sync = (r: EdgeReplica, now: number) => {
      const request = r.startSync(now);
      if (request)
        r.onAnswer(structuredClone(coordinator.sync(structuredClone(request), now)), now);
    };
    sync(a as EdgeReplica, 0);
    sync(b as EdgeReplica, 0);
    const request = prompt(6);
    const decision = a?.routeTo("c", request, 1);
    expect(decision).toMatchObject({ origin: "c", alternates: [], reason: STORED_RESPONSE_REASON });
    expect(decision?.ticket).toMatch(/^ia-pin-/);
    expect(a?.routeTo("z", request, 1)).toBeNull();
    sync(a as EdgeReplica, 2);
    sync(b as EdgeReplica, 3);
    const seen = b?.loads(3).find((l) => l.id === "c")?.load;
    expect(seen?.outstanding).toBe(1);
    // The next turn, decided by the other isolate, is believed held at the pinned origin.
    const next = b?.routeTo("c", prompt(8), 4);
    expect(next?.matchedTokens).toBe(6 * 64);
  });
});
