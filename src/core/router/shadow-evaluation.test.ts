import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { type PolicyType, policyOf } from "../policies/index.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { CoreRouter } from "./core-router.ts";

const origins = ["a", "b", "c", "d"].map((id) => ({ id, url: `http://${id}.test` }));

function router(live: PolicyType, shadows: PolicyType[]) {
  return new CoreRouter(
    parsePool({ origins, policy: policyOf(live), shadowPolicies: shadows.map((t) => policyOf(t)) }),
    {
      model: "m",
      seed: 3,
    },
  );
}

/** Sessions of growing conversations: turn t of session s shares the first t turns. */
function traffic(n: number) {
  return Array.from({ length: n }, (_, k) => {
    const session = k % 7;
    const chunks = 8 + 4 * Math.floor(k / 7);
    const hashes: number[] = [];
    let h = session + 1;
    for (let i = 0; i < chunks; i++) {
      h = chainHash(h, i);
      hashes.push(h);
    }
    return { chunkHashes: hashes, promptTokens: chunks * 64 };
  });
}

function replay(r: CoreRouter, requests: ReturnType<typeof traffic>) {
  return requests.map((req, k) => {
    const d = r.route(req, k * 10);
    r.complete(d.ticket as string, { ok: true }, k * 10 + 5);
    return [d.origin, d.reason, d.matchedTokens];
  });
}

describe("shadow evaluation", () => {
  it("never changes the live decisions or state", () => {
    const requests = traffic(80);
    const plain = router("cost", []);
    const shadowed = router("cost", ["random", "round-robin"]);
    expect(replay(shadowed, requests)).toEqual(replay(plain, requests));
    const { shadows: _a, ...a } = plain.stats(1000);
    const { shadows: _b, ...b } = shadowed.stats(1000);
    expect(b).toEqual(a);
  });

  it("counts agreement and the prefix match each shadow would have had", () => {
    const r = router("round-robin", ["cache-aware", "round-robin"]);
    replay(r, traffic(80));
    const [cacheAware, roundRobin] = r.stats(1000).shadows;
    expect(cacheAware).toMatchObject({ policy: "cache-aware", decisions: 80 });
    expect(roundRobin).toMatchObject({ policy: "round-robin", decisions: 80 });
    // 7 sessions over 4 origins: live round-robin finds a session's turn from 4 turns ago;
    // cache-aware would have found the previous turn.
    expect(cacheAware?.matchedTokens).toBeGreaterThan(1.3 * (cacheAware?.liveMatchedTokens ?? 0));
    expect(cacheAware?.agreements).toBeLessThan(80);
    // A second round-robin with its own cursor walks in step with the live one.
    expect(roundRobin?.agreements).toBe(80);
    expect(roundRobin?.matchedTokens).toBe(roundRobin?.liveMatchedTokens);
  });

  it("keeps the counters of shadows whose settings stay across a settings change", () => {
    const r = router("cost", ["llm-d", "dynamo"]);
    replay(r, traffic(20));
    r.applySettings(
      parsePool({ origins, shadowPolicies: [policyOf("dynamo"), policyOf("random")] }),
    );
    const stats = r.stats(0).shadows;
    expect(stats.map((s) => [s.policy, s.decisions])).toEqual([
      ["dynamo", 20],
      ["random", 0],
    ]);
  });
});
