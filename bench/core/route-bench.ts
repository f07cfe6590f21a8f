/**
 * `route()` latency per policy on a pool of 32 origins whose index holds ~1M chunk-ownerships
 * (32 x 31,250 chunks = 2M tokens each): the Durable Object's per-request CPU.
 */

import { quantile } from "../../sim/report/stats.ts";
import { chainHash } from "../../src/core/chunk-hash.ts";
import { POLICY_TYPES, type PolicyType, policyOf } from "../../src/core/policies/index.ts";
import { createRng } from "../../src/core/rng.ts";
import { CoreRouter } from "../../src/core/router/core-router.ts";
import { parsePool } from "../../src/core/settings/parse-settings.ts";
import type { Row } from "./table.ts";

const ORIGINS = 32;

/** Conversation-like prompts: 64 system prompts, sessions that grow 8 chunks per turn. */
function* workload(seed: number) {
  const rng = createRng(seed);
  const sessions: { system: number; id: number; turns: number }[] = [];
  for (let k = 0; ; k++) {
    if (sessions.length < 2000 || rng.next() < 0.2)
      sessions.push({ system: rng.int(64), id: k, turns: 0 });
    const s = sessions[rng.int(sessions.length)] as (typeof sessions)[number];
    s.turns = Math.min(s.turns + 1, 24);
    const chunks = 16 + s.turns * 8;
    const hashes = new Float64Array(chunks);
    let h = 1;
    for (let i = 0; i < chunks; i++) {
      h = chainHash(h, i < 16 ? s.system * 100 + i : s.id * 1000 + i);
      hashes[i] = h;
    }
    yield { chunkHashes: hashes, promptTokens: chunks * 64 };
  }
}

interface Case {
  label: string;
  policy: PolicyType;
  shadows: PolicyType[];
}

/** Every policy alone, then `cost` with two shadow policies (the price of shadow evaluation). */
const CASES: Case[] = [
  ...POLICY_TYPES.map((policy) => ({ label: policy, policy, shadows: [] })),
  { label: "cost + shadows cache-aware, llm-d", policy: "cost", shadows: ["cache-aware", "llm-d"] },
];

export function benchRoute(cases: readonly Case[] = CASES): Row[] {
  const origins = Array.from({ length: ORIGINS }, (_, i) => ({
    id: `gpu-${i}`,
    url: `http://gpu-${i}.test`,
  }));
  const rows: Row[] = [];
  for (const { label, policy, shadows } of cases) {
    const pool = parsePool({
      origins,
      policy: policyOf(policy),
      shadowPolicies: shadows.map((t) => policyOf(t)),
      kvCapacityTokens: 2_100_000,
      indexMaxChunks: 4_000_000,
    });
    const router = new CoreRouter(pool, { model: "bench" });
    const requests = workload(7);
    let now = 0;
    const inFlight: string[] = [];
    const step = (timed: boolean): number => {
      const req = requests.next().value as { chunkHashes: Float64Array; promptTokens: number };
      now += 5;
      const t0 = timed ? process.hrtime.bigint() : 0n;
      const d = router.route(req, now);
      const ns = timed ? Number(process.hrtime.bigint() - t0) : 0;
      inFlight.push(d.ticket as string);
      if (inFlight.length > 256) router.complete(inFlight.shift() as string, { ok: true }, now);
      return ns;
    };
    while (router.stats(now).index.ownerships < 1_000_000)
      for (let i = 0; i < 1000; i++) step(false);
    const samples = Float64Array.from({ length: 20_000 }, () => step(true) / 1000).sort();
    const [p50, p99] = [quantile(samples, 0.5), quantile(samples, 0.99)];
    rows.push({ name: `route() ${label} median`, value: p50, unit: "µs", target: "<= 30" });
    rows.push({ name: `route() ${label} p99`, value: p99, unit: "µs" });
  }
  return rows;
}
