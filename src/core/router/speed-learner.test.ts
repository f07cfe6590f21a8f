import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asSlot } from "../origin-indexes.ts";
import { SpeedLearner, type SpeedSample } from "./speed-learner.ts";

const A = asSlot(0);

/** A seeded uniform source in [0, 1) (mulberry32), so a property's noise is replayable. */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An origin of true speed `speed` and fixed time `fixedMs`, its TTFTs off by up to `noise`. */
function origin(speed: number, fixedMs: number, noise: number, seed: number) {
  const u = uniform(seed);
  return (): SpeedSample => {
    const workTokens = 200 + u() * 8000;
    const queuedTokens = u() < 0.5 ? 0 : u() * 4000;
    const exact = fixedMs + (1000 * (workTokens + queuedTokens)) / speed;
    return { ttftMs: exact * (1 + noise * (2 * u() - 1)), workTokens, queuedTokens };
  };
}

/** Feeds `n` samples one second apart from `at`; returns the time after the last. */
function feed(l: SpeedLearner, next: () => SpeedSample, n: number, at: number): number {
  for (let k = 0; k < n; k++) l.observe(A, next(), at + k * 1000);
  return at + n * 1000;
}

function learner(prior: number): SpeedLearner {
  const l = new SpeedLearner();
  l.configure(A, prior);
  return l;
}

const within = (value: number, truth: number, fraction: number) =>
  Math.abs(value / truth - 1) <= fraction;

describe("SpeedLearner", () => {
  it("keeps the prior until it has evidence", () => {
    const l = learner(10_000);
    feed(l, origin(25_000, 20, 0, 1), 15, 0);
    expect(l.speed(A)).toBe(10_000);
    expect(l.saved(A).samples).toBe(0);
    l.observe(A, origin(25_000, 20, 0, 2)(), 16_000);
    expect(within(l.speed(A), 25_000, 0.01)).toBe(true);
    expect(l.saved(A).samples).toBe(16);
  });

  it("learns speed and fixed time from exact samples", () => {
    const l = learner(4_000);
    feed(l, origin(24_643, 35, 0, 3), 64, 0);
    expect(within(l.speed(A), 24_643, 0.001)).toBe(true);
    expect(l.saved(A).fixedMs).toBeCloseTo(35, 0);
  });

  // Speed is only as identifiable as the work's share of a TTFT: at 83,000 tokens/s beside 50 ms
  // of fixed time, 20% noise leaves the 64-sample fit a 4.5% standard error, and one draw in
  // about 10,000 lands past 20% (a CI run once hit it). So the property bounds the worst case
  // with room (30%; the largest of 7,000 draws, 2,000 of them in that corner, was 22%), and a
  // seeded population bounds the typical error tightly (measured on 5,000: median 2.1%, p95 6.6%; these 250: 2.0%, 6.0%).
  it("property: noisy samples converge within 30% after 100, whatever the prior", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1_000, max: 100_000, noNaN: true }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.constantFrom(0.4, 2.5, 0.1, 10),
        fc.integer(),
        (speed, fixedMs, calibration, seed) => {
          const l = learner(speed * calibration);
          // TTFTs off by up to 20% either way; F up to 50 ms (an engine's scheduling, HTTP).
          feed(l, origin(speed, fixedMs, 0.2, seed), 100, 0);
          return within(l.speed(A), speed, 0.3);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("a seeded population of 250 noisy origins: median error under 3%, p95 under 9%, after 100 samples", () => {
    const u = uniform(20261205);
    const errors: number[] = [];
    for (let k = 0; k < 250; k++) {
      const speed = 1_000 + u() * 99_000;
      const fixedMs = u() * 50;
      const calibration = [0.4, 2.5, 0.1, 10][Math.floor(u() * 4)] as number;
      const l = learner(speed * calibration);
      feed(l, origin(speed, fixedMs, 0.2, Math.floor(u() * 2 ** 31)), 100, 0);
      errors.push(Math.abs(l.speed(A) / speed - 1));
    }
    errors.sort((a, b) => a - b);
    expect(errors[125]).toBeLessThan(0.03);
    expect(errors[237]).toBeLessThan(0.09);
  }, 60_000);

  it("property: follows a speed step (a GPU swapped) within 100 samples", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 2_000, max: 50_000, noNaN: true }),
        fc.constantFrom(0.5, 2, 3),
        fc.integer(),
        (speed, step, seed) => {
          const l = learner(speed);
          const at = feed(l, origin(speed, 20, 0.2, seed), 200, 0);
          feed(l, origin(speed * step, 20, 0.2, seed + 1), 100, at);
          return within(l.speed(A), speed * step, 0.2);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("follows a step within minutes at a trickle of traffic (age weighs samples)", () => {
    const l = learner(10_000);
    const slow = origin(10_000, 20, 0.1, 7);
    for (let k = 0; k < 64; k++) l.observe(A, slow(), k * 1000);
    const fast = origin(30_000, 20, 0.1, 8);
    // One request every 20 s: ten minutes is 30 samples, under half the window.
    for (let k = 1; k <= 30; k++) l.observe(A, fast(), 64_000 + k * 20_000);
    expect(within(l.speed(A), 30_000, 0.2)).toBe(true);
  });

  it("property: one wild sample (100x slower, or queued behind what the router did not see) moves the speed by under 5%", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1_000, max: 100_000, noNaN: true }),
        fc.integer(),
        fc.constantFrom("slow", "queued"),
        (speed, seed, kind) => {
          const l = learner(speed);
          const next = origin(speed, 20, 0.2, seed);
          const at = feed(l, next, 64, 0);
          const before = l.speed(A);
          const s = next();
          const wild =
            kind === "slow"
              ? { ...s, ttftMs: s.ttftMs * 100 }
              : { ...s, ttftMs: s.ttftMs + (1000 * 50_000) / speed };
          l.observe(A, wild, at);
          return within(l.speed(A), before, 0.05);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("property: a few queued samples (TTFT with unseen queueing) leave the estimate within 20%", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const speed = 20_000;
        const l = learner(8_000);
        const next = origin(speed, 20, 0.1, seed);
        const u = uniform(seed ^ 0x5f3759df);
        for (let k = 0; k < 200; k++) {
          const s = next();
          // One in five waited behind work the router never saw (up to 10 s of it).
          const unseen = u() < 0.2 ? u() * 10_000 : 0;
          l.observe(A, { ...s, ttftMs: s.ttftMs + unseen }, k * 1000);
        }
        return within(l.speed(A), speed, 0.2);
      }),
      { numRuns: 40 },
    );
  });

  it("uses the engine's counters before any TTFT", () => {
    const l = learner(10_000);
    l.measure(A, 30_000, 4096, 0);
    expect(l.speed(A)).toBe(30_000);
  });

  describe("counters read below the TTFT-fitted speed under co-batched decode (bench: 7.13 req/s against 7.60 without them)", () => {
    const B = asSlot(1);
    const C = asSlot(2);

    /** A fed a window of TTFTs at `speed` and counters reading `speed / bias`, B configured. */
    function pool(speed: number, bias: number): SpeedLearner {
      const l = learner(10_000);
      l.configure(B, 10_000);
      l.configure(C, 10_000);
      const at = feed(l, origin(speed, 20, 0.05, 21), 64, 0);
      for (let k = 0; k < 4; k++) l.measure(A, speed / bias, 4096, at + k);
      return l;
    }

    it("with TTFT evidence that says S and counters that say S/3, the learned speed stays near S", () => {
      const l = pool(24_000, 3);
      expect(within(l.speed(A), 24_000, 0.05)).toBe(true);
    });

    it("an origin with only counter evidence reads counter x the pool's learned bias", () => {
      const l = pool(24_000, 3);
      l.measure(B, 6_000, 4096, 64_010);
      expect(within(l.speed(B), 18_000, 0.05)).toBe(true);
    });

    it("an engine whose counters are unbiased (an idle engine) still learns from them", () => {
      const l = pool(24_000, 1);
      l.measure(B, 6_000, 4096, 64_010);
      expect(within(l.speed(B), 6_000, 0.05)).toBe(true);
    });

    it("one wild counter reading moves nothing", () => {
      const l = pool(24_000, 3);
      const fitted = l.speed(A);
      l.measure(A, 100, 4096, 64_010);
      expect(within(l.speed(A), fitted, 1e-9)).toBe(true);
      for (let k = 0; k < 5; k++) l.measure(C, 9_000, 4096, 64_010 + k);
      const counted = l.speed(C);
      l.measure(C, 100, 4096, 64_020);
      expect(l.speed(C)).toBe(counted);
    });

    it("a counters-only origin read before the pool's bias was known takes it once it is (real llama-servers: cpu-a kept its raw counters, 272 tok/s against its peers' 360-420, and got no more work)", () => {
      const l = learner(10_000);
      l.configure(B, 10_000);
      l.measure(B, 6_000, 4096, 0);
      expect(l.speed(B)).toBe(6_000);
      const at = feed(l, origin(24_000, 20, 0.05, 24), 64, 1000);
      for (let k = 0; k < 4; k++) l.measure(A, 8_000, 4096, at + k);
      l.age(at + 10);
      expect(within(l.speed(B), 18_000, 0.05)).toBe(true);
    });

    it("a counters-only origin (a P/D prefill origin: no TTFT) reads its speed steadily whatever the last prompts were (bench:pd: it swung 0.3x-1.75x and P/D's p90 TTFT went 1.20x -> 1.36x aggregated)", () => {
      const l = learner(10_000);
      l.configure(B, 10_000);
      const ttft = origin(24_000, 20, 0.05, 25);
      // Each prompt reads its own speed in raw tokens (a long one's attention reads slow) for
      // a few one-second reports; across prompts the counters read 24k / 1.3, like A's.
      const mix = [0.5, 1.25, 0.75, 1.5, 1];
      let worst = 0;
      for (let k = 0; k < 400; k++) {
        const at = k * 1000;
        l.observe(A, ttft(), at);
        l.measure(A, 24_000 / 1.3, 4096, at);
        const prompt = mix[Math.floor(k / 4) % mix.length] as number;
        l.measure(B, (24_000 / 1.3) * prompt, 4096, at + 1);
        if (k >= 300) worst = Math.max(worst, Math.abs(l.speed(B) / 24_000 - 1));
      }
      expect(worst).toBeLessThan(0.1);
    });

    it("a starved origin's aged TTFT evidence gives way to its bias-corrected counters", () => {
      const l = pool(24_000, 3);
      // B fitted at 12k long ago; its counters now read 6k beside A's bias of 3.
      const slow = origin(12_000, 20, 0.05, 22);
      for (let k = 0; k < 64; k++) l.observe(B, slow(), k * 1000);
      expect(within(l.speed(B), 12_000, 0.05)).toBe(true);
      const later = feed(l, origin(24_000, 20, 0.05, 23), 16, 64_000 + 20 * 120_000);
      for (let k = 0; k < 4; k++) l.measure(A, 8_000, 4096, later + k);
      for (let k = 0; k < 4; k++) l.measure(B, 6_000, 4096, later + 10 + k);
      expect(within(l.speed(B), 18_000, 0.05)).toBe(true);
    });
  });

  it("one short engine measurement does not set an origin's speed (real llama-servers: 86 tokens read 4x slow)", () => {
    const l = learner(900);
    l.measure(A, 213, 86, 0);
    expect(l.speed(A)).toBe(900);
    expect(l.saved(A).samples).toBe(0);
    // Measurements covering enough tokens do, each weighed by its tokens in their median: the
    // short one moves nothing, where counted as a full one in a mean it would halve it (348).
    l.measure(A, 950, 1000, 1);
    expect(l.speed(A)).toBe(950);
  });

  it("an origin read from its counters keeps a finite speed once its last measurements cover too few tokens (real llama-servers: cpu-a read NaN after small prompts, and its queue NaN)", () => {
    const l = learner(40);
    l.measure(A, 300, 2044, 0);
    expect(l.speed(A)).toBe(300);
    // Eight short measurements: the window's tokens fall under what sets a speed.
    for (let k = 1; k <= 8; k++) l.measure(A, 100, 20, k * 1000);
    l.age(10_000);
    expect(l.speed(A)).toBe(300);
    expect(l.saved(A).tokensPerSecond).toBe(300);
  });

  it("property: any mix of samples, counter readings short or long, and time keeps the speed finite", () => {
    const step = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant("measure" as const),
          speed: fc.double({ min: 10, max: 1e5, noNaN: true }),
          // Mostly short readings (a few small prompts each), some that set a speed alone.
          tokens: fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }) },
            { weight: 1, arbitrary: fc.integer({ min: 1024, max: 4096 }) },
          ),
        }),
      },
      fc.record({
        kind: fc.constant("observe" as const),
        ttftMs: fc.double({ min: 0, max: 1e5, noNaN: true }),
        workTokens: fc.double({ min: 0, max: 1e4, noNaN: true }),
        queuedTokens: fc.double({ min: 0, max: 1e4, noNaN: true }),
      }),
      fc.record({ kind: fc.constant("age" as const), ms: fc.integer({ min: 0, max: 600_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const l = learner(40);
        let now = 0;
        for (const s of steps) {
          now += s.kind === "age" ? s.ms : 500;
          if (s.kind === "measure") l.measure(A, s.speed, s.tokens, now);
          else if (s.kind === "observe") l.observe(A, s, now);
          else l.age(now);
          expect(Number.isFinite(l.speed(A))).toBe(true);
          expect(Number.isFinite(l.saved(A).fixedMs)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("adopts another learner's values (snapshot, coordinator) and keeps them over a new prior", () => {
    const l = learner(10_000);
    l.adopt(A, { tokensPerSecond: 22_000, fixedMs: 12, samples: 64 });
    l.configure(A, 5_000);
    expect(l.saved(A)).toEqual({ tokensPerSecond: 22_000, fixedMs: 12, samples: 1 });
    l.adopt(A, { tokensPerSecond: 1, fixedMs: 0, samples: 0 });
    expect(l.speed(A)).toBe(22_000);
  });

  it("an origin without evidence takes its peers' correction of the prior", () => {
    const l = learner(10_000);
    const B = asSlot(1);
    l.configure(B, 4_000);
    expect(l.speed(B)).toBe(4_000);
    feed(l, origin(25_000, 20, 0, 4), 32, 0);
    // A's prior was 2.5x too low; B's, set the same way, is taken to be too.
    expect(within(l.speed(B), 10_000, 0.01)).toBe(true);
    expect(l.saved(B).samples).toBe(0);
  });

  describe("aging: evidence weighs less as it ages, against the peer-corrected prior", () => {
    const HALF_LIFE = 120_000;
    const B = asSlot(1);
    const C = asSlot(2);
    const D = asSlot(3);

    /** Origins A to D, each with prior `prior`. */
    function pool(prior: number): SpeedLearner {
      const l = new SpeedLearner();
      for (const slot of [A, B, C, D]) l.configure(slot, prior);
      return l;
    }

    /** `n` samples per origin one second apart from `at`, round robin; returns the end. */
    function feedAll(
      l: SpeedLearner,
      sources: [ReturnType<typeof asSlot>, () => SpeedSample][],
      n: number,
      at: number,
    ): number {
      for (let k = 0; k < n; k++) {
        for (const [slot, next] of sources) l.observe(slot, next(), at + k * 1000);
      }
      return at + n * 1000;
    }

    it("a starved origin with a wrong low learned speed reads its peer-corrected prior after 10 half-lives", () => {
      const l = pool(10_000);
      // C's samples read it 5x slow (queues the router did not see); then cost starves it.
      let at = feedAll(
        l,
        [
          [A, origin(25_000, 20, 0.1, 11)],
          [B, origin(25_000, 20, 0.1, 12)],
          [C, origin(5_000, 20, 0.1, 13)],
          [D, origin(25_000, 20, 0.1, 14)],
        ],
        64,
        0,
      );
      expect(within(l.speed(C), 5_000, 0.2)).toBe(true);
      const peers: [ReturnType<typeof asSlot>, () => SpeedSample][] = [
        [A, origin(25_000, 20, 0.1, 15)],
        [B, origin(25_000, 20, 0.1, 16)],
        [D, origin(25_000, 20, 0.1, 17)],
      ];
      // Ten half-lives in which only its peers get work, one request every 10 s each.
      for (let k = 0; k < 120; k++) at = feedAll(l, peers, 1, at + 9_000);
      // Its prior, 10,000, times its peers' correction, 2.5.
      expect(within(l.speed(C), 25_000, 0.05)).toBe(true);
      for (const slot of [A, B, D]) expect(within(l.speed(slot), 25_000, 0.2)).toBe(true);
    });

    it("a snapshot-restored estimate ages likewise (real llama-servers: cpu-a kept 213 tok/s against its peers' ~850)", () => {
      const l = pool(38);
      l.adopt(A, { tokensPerSecond: 213, fixedMs: 0, samples: 10 });
      l.adopt(B, { tokensPerSecond: 850, fixedMs: 0, samples: 64 });
      l.adopt(C, { tokensPerSecond: 820, fixedMs: 0, samples: 64 });
      l.adopt(D, { tokensPerSecond: 880, fixedMs: 0, samples: 64 });
      const start = 1.7e12; // wall-clock ms: restored values age from the first tick
      l.age(start);
      expect(l.speed(A)).toBe(213);
      l.age(start + HALF_LIFE);
      expect(l.speed(A)).toBeLessThan(850 * 0.9);
      l.age(start + 10 * HALF_LIFE);
      // 38 times the peers' median correction (850 / 38).
      expect(within(l.speed(A), 850, 0.02)).toBe(true);
      // The peers, with each other for peers, read what they read.
      expect(within(l.speed(B), 850, 0.05)).toBe(true);
    });

    it("an aged origin that really is slow reads slow again within 16 samples", () => {
      const l = pool(10_000);
      const slow = origin(5_000, 20, 0.1, 21);
      let at = feedAll(
        l,
        [
          [A, origin(25_000, 20, 0.1, 22)],
          [B, origin(25_000, 20, 0.1, 23)],
          [C, slow],
          [D, origin(25_000, 20, 0.1, 24)],
        ],
        64,
        0,
      );
      at += 20 * HALF_LIFE;
      l.age(at);
      expect(within(l.speed(C), 25_000, 0.05)).toBe(true);
      feedAll(l, [[C, slow]], 16, at);
      expect(within(l.speed(C), 5_000, 0.2)).toBe(true);
    });

    it("property: after a silence, one wild sample moves the speed by under 5%", () => {
      fc.assert(
        fc.property(
          fc.double({ min: 1_000, max: 100_000, noNaN: true }),
          fc.integer(),
          fc.constantFrom(0.5, 2, 5, 20),
          fc.constantFrom(0.01, 100),
          (speed, seed, silence, wild) => {
            const l = learner(speed * 0.5);
            const next = origin(speed, 20, 0.2, seed);
            const at = feed(l, next, 64, 0) + silence * HALF_LIFE;
            l.age(at);
            const before = l.speed(A);
            const s = next();
            l.observe(A, { ...s, ttftMs: s.ttftMs * wild }, at);
            return within(l.speed(A), before, 0.05);
          },
        ),
        { numRuns: 60 },
      );
    });

    it("property: the estimate lies between the peer-corrected prior and the evidence, nearer the prior the older", () => {
      fc.assert(
        fc.property(
          fc.array(fc.double({ min: 1_000, max: 100_000, noNaN: true }), {
            minLength: 3,
            maxLength: 3,
          }),
          fc.array(fc.double({ min: 1_000, max: 100_000, noNaN: true }), {
            minLength: 3,
            maxLength: 3,
          }),
          fc.array(fc.double({ min: 0, max: 30, noNaN: true }), { minLength: 1, maxLength: 6 }),
          fc.integer(),
          (priors, speeds, silences, seed) => {
            const slots = [A, B, C];
            const build = () => {
              const l = new SpeedLearner();
              slots.forEach((slot, i) => {
                l.configure(slot, priors[i] as number);
              });
              const at = feedAll(
                l,
                slots.map((slot, i) => [slot, origin(speeds[i] as number, 20, 0.2, seed + i)]),
                64,
                0,
              );
              return { l, at };
            };
            const { l, at } = build();
            const evidence = l.speed(C);
            // The peer-corrected prior, as a twin fed alike reads it once its evidence has aged
            // away (C's prior times its peers' median evidence / prior; what routing reads of the
            // peers is shrunk toward the pool, so it cannot be rebuilt from their speeds).
            const twin = build();
            twin.l.age(twin.at + 40 * HALF_LIFE);
            const prior = twin.l.speed(C);
            const lo = Math.min(prior, evidence) * (1 - 1e-9);
            const hi = Math.max(prior, evidence) * (1 + 1e-9);
            let distance = Number.POSITIVE_INFINITY;
            for (const silence of [...silences].sort((x, y) => x - y)) {
              l.age(at + silence * HALF_LIFE);
              const estimate = l.speed(C);
              if (!(estimate >= lo && estimate <= hi)) return false;
              const next = Math.abs(Math.log(estimate / prior));
              if (next > distance * (1 + 1e-9)) return false;
              distance = next;
            }
            return true;
          },
        ),
        { numRuns: 100 },
      );
    });
  });

  describe("shrinkage toward the pool: an origin reads as far from its peers as its fit's precision says", () => {
    const slots = Array.from({ length: 8 }, (_, i) => asSlot(i));

    /**
     * TTFTs swamped by waits the router's queue does not model (KV full: sessions-8's gpu-6
     * waited 5-17 s with its queue estimate near 0), its own few hundred tokens no longer
     * explaining them.
     */
    function swamped(speed: number, seed: number): () => SpeedSample {
      const u = uniform(seed);
      return () => {
        const workTokens = 100 + u() * 600;
        const ttftMs = 2_000 + u() * 10_000 + (1000 * workTokens) / speed;
        return { ttftMs, workTokens, queuedTokens: 0 };
      };
    }

    /**
     * Eight origins of prior 10,000, `sample(i, round)` their samples, fed round robin four
     * rounds a second for `rounds`; `check` runs after each round.
     */
    function run(
      sample: (i: number, round: number) => SpeedSample,
      rounds: number,
      check: (l: SpeedLearner, round: number) => void = () => {},
    ): SpeedLearner {
      const l = new SpeedLearner();
      for (const slot of slots) l.configure(slot, 10_000);
      for (let k = 0; k < rounds; k++) {
        slots.forEach((slot, i) => {
          l.observe(slot, sample(i, k), k * 250);
        });
        check(l, k);
      }
      return l;
    }

    /** Each origin's speed over the median of the others', as a factor >= 1. */
    function offPool(l: SpeedLearner, i: number): number {
      const others = slots.filter((_, j) => j !== i).map((slot) => l.speed(slot));
      const pool = others.sort((a, b) => a - b)[others.length >> 1] as number;
      return Math.exp(Math.abs(Math.log(l.speed(slots[i] as typeof A) / pool)));
    }

    // Its worst reading over rounds 150-300, measured over 2,100 seeds: median 1.01x, p99
    // 1.16-1.22x, largest 1.57x (three seeds past 1.5x, all reading slow: a fit of se about 0.15
    // reading 50x slow keeps a little of it); before shrinkage the median was 75x and 2 seeds
    // in 100 stayed within 2x (so 8 runs fail before it all but surely).
    it("property: one origin swamped by memory waits reads within 2x of its peers (sessions-8: its slope read up to 389k tok/s against 24.6k, and cost sent it nearly every request)", () => {
      fc.assert(
        fc.property(fc.integer(), (seed) => {
          const peers = slots.map((_, i) => origin(24_000, 20, 0.2, seed + i));
          const waits = swamped(24_000, seed ^ 0x2545f491);
          let worst = 1;
          run(
            (i, k) => (i === 0 && k >= 100 ? waits() : (peers[i] as () => SpeedSample)()),
            300,
            (l, k) => {
              if (k >= 150) worst = Math.max(worst, offPool(l, 0));
            },
          );
          return worst < 2;
        }),
        { numRuns: 8 },
      );
    });

    // The largest error measured over 600 seeds: 1.08x (p99 1.07x); before shrinkage, 1.11x.
    it("property: in a pool of one speed under 20% noise every origin reads within 15% of it", () => {
      fc.assert(
        fc.property(fc.integer(), (seed) => {
          const sources = slots.map((_, i) => origin(24_000, 20, 0.2, seed + i));
          const l = run((i) => (sources[i] as () => SpeedSample)(), 150);
          return slots.every((slot) => within(l.speed(slot), 24_000, 0.15));
        }),
        { numRuns: 8 },
      );
    });

    it("a mixed pool (H100s beside A100s and L40Ss: speeds 2x apart, precise samples) keeps its differences", () => {
      const speeds = [48_000, 48_000, 24_000, 24_000, 24_000, 24_000, 12_000, 12_000];
      const sources = speeds.map((speed, i) => origin(speed, 20, 0.05, 31 + i));
      const l = run((i) => (sources[i] as () => SpeedSample)(), 150);
      slots.forEach((slot, i) => {
        expect(within(l.speed(slot), speeds[i] as number, 0.05)).toBe(true);
      });
    });

    it("one faster origin among seven alike keeps most of its difference (the spread's floor, MIN_TAU)", () => {
      const speeds = [48_000, 24_000, 24_000, 24_000, 24_000, 24_000, 24_000, 24_000];
      const sources = speeds.map((speed, i) => origin(speed, 20, 0.05, 41 + i));
      const l = run((i) => (sources[i] as () => SpeedSample)(), 150);
      expect(within(l.speed(A), 48_000, 0.1)).toBe(true);
    });
  });

  it("an edge replica's learner only adopts", () => {
    const l = new SpeedLearner(false);
    l.configure(A, 10_000);
    feed(l, origin(25_000, 20, 0, 1), 64, 0);
    l.measure(A, 25_000, 4096, 0);
    expect(l.speed(A)).toBe(10_000);
  });
});
