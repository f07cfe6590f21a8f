import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import { policyOf } from "../policies/index.ts";
import { prefillWork } from "../prefill-work.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { freshChain } from "../test-support/fresh-chain.ts";
import { CoreRouter } from "./core-router.ts";
import type { Outcome } from "./router-types.ts";

/** True prefill speeds (tokens/s) of the origins; settings are told otherwise. */
const MIXED: Record<string, number> = { a: 25_000, b: 25_000, c: 5_000, d: 5_000 };
const SAME: Record<string, number> = { a: 25_000, b: 25_000, c: 25_000, d: 25_000 };
let TRUE_SPEED = MIXED;
const FIXED_MS = 20;

function router(prior: (id: string) => number): CoreRouter {
  const origins = Object.keys(TRUE_SPEED).map((id) => ({
    id,
    url: `http://${id}.test`,
    prefillTokensPerSecond: prior(id),
  }));
  return new CoreRouter(parsePool({ origins, policy: policyOf("cost") }), { model: "m" });
}

/** A fresh prompt of `chunks` chunks (64 tokens each), shared with no other. */
function fresh(n: number, chunks: number) {
  return { chunkHashes: freshChain(n, chunks), promptTokens: chunks * 64 };
}

/**
 * `n` requests `gapMs` apart on origins that prefill one at a time at their true speed (the
 * router's queue estimate is right only at the true speed), each answered at its first token
 * with the TTFT, if `ttft`, and usage. Returns when the last was answered.
 */
function train(r: CoreRouter, n: number, ttft = true, gapMs = 120): number {
  const busyUntil: Record<string, number> = {};
  const pending: { at: number; ticket: string; outcome: Outcome }[] = [];
  const answer = (until: number) => {
    pending.sort((x, y) => x.at - y.at);
    while (pending.length > 0 && (pending[0] as { at: number }).at <= until) {
      const p = pending.shift() as (typeof pending)[number];
      r.complete(p.ticket, p.outcome, p.at);
    }
  };
  for (let k = 0; k < n; k++) {
    const now = k * gapMs;
    answer(now);
    const request = fresh(k, 16 + ((k * 37) % 112));
    const d = r.route(request, now);
    const origin = d.origin as string;
    const work = prefillWork(0, request.promptTokens, 32_768);
    const start = Math.max(now, busyUntil[origin] ?? 0);
    busyUntil[origin] = start + (1000 * work) / (TRUE_SPEED[origin] as number);
    const ttftMs = FIXED_MS + (busyUntil[origin] as number) - now;
    const usage = { ok: true, promptTokens: request.promptTokens, cachedTokens: 0 };
    const outcome = ttft ? { ...usage, ttftMs } : usage;
    pending.push({ at: now + ttftMs, ticket: d.ticket as string, outcome });
  }
  answer(Number.POSITIVE_INFINITY);
  return Math.max(n * gapMs, ...Object.values(busyUntil)) + 1;
}

/**
 * Where a burst of prompts sharing a long prefix goes, none answered: whether the prefix's
 * holder is worth waiting for depends on how fast the router believes its queue drains. Origins
 * are numbered by first use (equal origins are interchangeable).
 */
function burst(r: CoreRouter, from: number): number[] {
  const seen: (string | null)[] = [];
  return Array.from({ length: 40 }, (_, k) => {
    const hashes: number[] = [];
    let h = 99;
    for (let i = 0; i < 100; i++) {
      h = chainHash(h, i < 96 ? i : 1000 * k + i);
      hashes.push(h);
    }
    const origin = r.route({ chunkHashes: hashes, promptTokens: 6400 }, from + k * 40).origin;
    if (!seen.includes(origin)) seen.push(origin);
    return seen.indexOf(origin);
  });
}

describe("CoreRouter: self-calibrated prefill speed", () => {
  it("learns each origin's speed from TTFTs, whatever settings said, and cost routes by it", () => {
    TRUE_SPEED = MIXED;
    const r = router(() => 10_000);
    const end = train(r, 400);
    const learned = r.stats(0).origins.map((o) => o.prefill);
    for (const o of r.stats(0).origins) expect(o.prefill.priorTokensPerSecond).toBe(10_000);
    // The fast ones, which took most of the work, exactly; the slow ones, whose first samples
    // came while the router believed them as fast as their peers (their queues unseen), read
    // slow (speed-learner.ts's known limit), but never as fast as the fast ones.
    for (const fast of learned.slice(0, 2)) {
      expect(Math.abs(fast.tokensPerSecond / 25_000 - 1)).toBeLessThan(0.05);
    }
    for (const slow of learned.slice(2)) expect(slow.tokensPerSecond).toBeLessThan(6_000);
    // Idle (queues drained, evidence still fresh: speed-learner.ts ages it), a fresh prompt
    // goes to a fast origin: five times the speed.
    for (let k = 0; k < 10; k++) {
      const d = r.route(fresh(50_000 + k, 64), end + 10_000 + k * 10_000);
      expect(["a", "b"]).toContain(d.origin);
      r.cancel(d.ticket as string, end + 10_000 + k * 10_000);
    }
  });

  it("cost: a prior at 0.4x or 2.5x of the truth stops mattering once learned", () => {
    TRUE_SPEED = SAME;
    const truth = (id: string) => TRUE_SPEED[id] as number;
    const decide = (calibration: number, ttft: boolean) => {
      const r = router((id) => truth(id) * calibration);
      return burst(r, train(r, 300, ttft));
    };
    const exact = decide(1, true);
    expect(decide(0.4, true)).toEqual(exact);
    expect(decide(2.5, true)).toEqual(exact);
    // Without TTFTs nothing is learned, and the mis-set priors route otherwise.
    expect(decide(0.4, false)).not.toEqual(decide(2.5, false));
  });

  it("cost: an origin restored with a wrong low speed gets work again under load and learns its own", () => {
    TRUE_SPEED = SAME;
    const r = router(() => 25_000);
    // As a snapshot restores them (real llama-servers: cpu-a kept 213 tok/s against ~850).
    for (const id of ["a", "b", "d"]) {
      r.adoptSpeed(id, { tokensPerSecond: 25_000, fixedMs: 20, samples: 64 }, 0);
    }
    r.adoptSpeed("c", { tokensPerSecond: 5_000, fixedMs: 20, samples: 64 }, 0);
    // Fifteen minutes at 11 requests a second (about half the pool's prefill): cost sends c
    // nothing while it reads five times slower (before aging, never); as that ages toward its
    // peers' correction, c wins when the others queue (from about 0.87x of them, minute 8) and
    // learns. At lower load the others never queue, c is not needed, and its speed still ages
    // to its peers'.
    const end = train(r, 10_000, true, 90);
    const c = r.stats(end).origins.find((o) => o.id === "c");
    expect(c?.prefill.samples).toBeGreaterThanOrEqual(16);
    expect(Math.abs((c?.prefill.tokensPerSecond ?? 0) / 25_000 - 1)).toBeLessThan(0.1);
  }, 60_000);

  it("a snapshot carries the learned speeds to the restored router", () => {
    TRUE_SPEED = MIXED;
    const r = router(() => 10_000);
    train(r, 200);
    const restored = router(() => 10_000);
    restored.restore(r.snapshot());
    const speeds = (x: CoreRouter) => x.stats(0).origins.map((o) => o.prefill);
    expect(speeds(restored).map((p) => p.tokensPerSecond)).toEqual(
      speeds(r).map((p) => p.tokensPerSecond),
    );
    expect(speeds(restored).some((p) => p.tokensPerSecond === 10_000)).toBe(
      speeds(r).some((p) => p.samples === 0),
    );
  });
});
