/**
 * Each origin's prefill speed (tokens/s) and fixed per-request time (ms), learned online from
 * what the router already sees: settings' `prefillTokensPerSecond` is the prior, not the truth.
 *
 * The model of one request's time to first token, for the prefill work X the router believes
 * stood before its first token (the queue it estimated at dispatch plus the request's own
 * prefill work given the engine's `cached_tokens`, prefill-work.ts):
 *   ttft = F + 1000 X / S
 * Each completion with a measured TTFT (a streamed answer served whole by one origin) is a
 * sample (X, ttft) in a bounded window per origin (the last WINDOW), weighted by
 * - its age: halved every HALF_LIFE_MS, so a GPU swapped or a co-tenant is followed within
 *   minutes at any traffic, and within WINDOW / 2 requests at high traffic;
 * - how little of X was queue: own / (own + queued), since the estimated queue is the least
 *   certain part: it drained at the speed believed then, so under a mis-set prior it is as
 *   wrong as the prior (an idle origin's sample has weight 1).
 * The line is fitted by iteratively reweighted least squares on relative residuals (a TTFT's
 * noise grows with it) with Tukey's biweight, warm-started from the last fit, its scale the
 * weighted median absolute residual (MAD): a sample more than BIWEIGHT_CAP scales off the line
 * weighs nothing, so one sample 100 times slower, or one that waited behind work the router
 * never saw, moves nothing, and a fifth of such samples in the window still leave the speed
 * within 20% (unit tests). An origin's first fit starts from its prior, which may be far off,
 * so it takes HUBER_STEPS Huber steps first (a convex loss: converges from anywhere); later
 * fits start from the last. A real change of speed is followed once new samples are a large
 * part of the window's weight (they then set the MAD). O(n log n) per completion, n = WINDOW.
 * Tried and dropped, on the unit tests' noisy and queued origins: least squares (one sample
 * moves it without bound); Huber alone (drifted 25% under a fifth of queued samples: its scale
 * grows with them); a low-quantile fit or F read off a low quantile (leans on the lucky tail:
 * 20-40% too fast under ordinary noise); Tukey's resistant line and alternating medians (F and
 * S traded off, stuck far from the truth); Theil-Sen (O(n^2) per completion).
 * The queue in X drained at the speed believed at dispatch, so a prior far too fast makes the
 * router believe loaded origins idle, and their first samples read slow; an origin the router
 * then stops sending work to would learn nothing more. So evidence ages: what the origin's
 * samples say (the fit and the engine's counters, its "evidence speed") weighs, in log speed,
 * against its peer-corrected prior (its prior times the median learned / prior of the other
 * origins that learned) by the evidence's mass (accepted samples, halved every HALF_LIFE_MS)
 * over FULL_EVIDENCE: an origin at any steady traffic reads its evidence alone, a starved one
 * (or one restored from a snapshot, whose values count as FULL_EVIDENCE samples from the first
 * time it ages) reads its peer-corrected prior after a few half-lives, and gets work again to
 * measure. In the fit an old sample never weighs under MIN_AGE_WEIGHT of a fresh one, so the
 * first sample after a silence is judged against the window's known noise: one wild sample
 * then moves nothing, where at equal age weights it would have set the line alone.
 *
 * An engine that reports its own counters (`prefill-rate` events: prompt tokens over prompt
 * seconds, differenced by the reporter) reads a biased speed: every iteration that prefills also
 * carries the decode batch, so under load the counters read a fraction of the speed that TTFT
 * shows (a third on the simulator's conversation trace at load 0.8; real llama.cpp and vLLM
 * count the same way). Taken as truth (each full measurement as 32 samples, blended with the
 * fit), they cost `cost` 6% of its capacity. So the TTFT fit, the model routing predicts with,
 * decides the speed whenever it has evidence, and the counters inform only an origin with
 * little (a new one, or a starved one whose samples aged): its counter speed times the pool's
 * bias, the median over the other origins with full TTFT evidence and counters of fitted speed /
 * counter speed (1 when none has both: an idle engine's counters are unbiased and taken at their
 * word). Between the two, in log speed, by the fit's accepted samples (aged) over FULL_EVIDENCE.
 * Such an origin's reading follows the bias at each `age`: on real llama-servers one read from
 * its raw counters before any peer had both kept 272 tok/s against its peers' 360-420 and got no
 * more work.
 * The bias is learned, not assumed: it follows the pool's load (3 under decode, 1 idle).
 * An origin's counter speed is the weighted median of its last ENGINE_WINDOW measurements, each
 * weighed by its tokens (up to ENGINE_FULL_TOKENS) and age, and counts only once they cover
 * ENGINE_FULL_TOKENS: one wild reading moves nothing, and one short measurement (mostly the
 * engine's fixed time and rounding: on real llama-servers one of 86 tokens read 213 tok/s
 * against its peers' 900, set the origin's speed alone, and `cost` sent it 2 of 200 requests)
 * sets nothing. ENGINE_WINDOW is long enough that age, not count, bounds it (at the reporter's
 * 1 s interval, four minutes of prefill: two half-lives). Each reading is the last second's
 * prompts' own speed in raw tokens (a long prompt's attention reads slow), so with the last 8
 * a P/D pool's prefill origins, which see no TTFT (a prefill leg's first token is not the
 * client's) and read their counters alone, swung from 0.3x to 1.75x their speed with the last
 * prompt or two, and conditional P/D's p90 TTFT went from 1.20x to 1.36x aggregated's, its
 * p99 ITL from 0.22x to 0.51x (bench:pd, bench/sim/README.md). Considered and dropped there: a
 * bias per role (prefill-only engines batch no decode, so their counters might read unbiased).
 * Measured, the prefill origins' counters read what the decode origins' did (median 19.1k
 * against 18.5k tok/s, the decode origins' fit 24.1k: the bias there is attention's, raw tokens
 * against work, not decode's), and a prefill origin never has the fit a bias of its own needs,
 * so it would take its counters at their word, 0.77x its speed.
 * Counters count as evidence for aging at ENGINE_WEIGHT samples a full one, in the part of the
 * speed they set; a reading for an origin whose fit stands alone refits nothing.
 * Weighing each reading by how well it predicts TTFT was the alternative: it needs TTFT samples,
 * which is when the fit already answers.
 *
 * Pure: `now` is passed in. The learned values are snapshot, shown, and sent to edge replicas.
 */
import type { Slot } from "../origin-indexes.ts";

const WINDOW = 64;
const HALF_LIFE_MS = 120_000;
const MIN_SAMPLES = 16;
/** Evidence (accepted samples, age-weighted) at which an origin's own estimate stands alone. */
const FULL_EVIDENCE = 8;
/** The least an old sample weighs in the fit, against a fresh one (4 half-lives). */
const MIN_AGE_WEIGHT = 1 / 16;
/** Samples one engine measurement of ENGINE_FULL_TOKENS or more counts as, as evidence. */
const ENGINE_WEIGHT = 32;
/** Prompt tokens a measurement needs to count fully, and the window's to set a speed alone. */
const ENGINE_FULL_TOKENS = 1024;
/** Engine measurements kept per origin (age bounds them first: see the header). */
const ENGINE_WINDOW = 256;
const IRLS_STEPS = 4;
/** Tukey's biweight cut-off and Huber's cap, in scales: 95% efficiency under Gaussian noise. */
const BIWEIGHT_CAP = 4.685;
const HUBER_CAP = 1.345;
/** Huber steps before the first biweight fit of an origin (from its prior). */
const HUBER_STEPS = 10;
/** The relative scale never falls below this: exact samples would give weights of 0/0. */
const MIN_SCALE = 0.001;
/** A fitted TTFT is never taken below this (ms), so relative residuals stay finite. */
const MIN_TTFT_MS = 1;
/** X's weighted coefficient of variation below which F and S cannot be told apart. */
const MIN_SPREAD = 0.1;
/** The speed settings allow (settings-schema.ts). */
const MIN_SPEED = 1;
const MAX_SPEED = 1e7;

/** One completion as the learner reads it. */
export interface SpeedSample {
  /** The origin's time to its first token, ms. */
  readonly ttftMs: number;
  /** The request's own prefill work (short-context token equivalents, prefill-work.ts). */
  readonly workTokens: number;
  /** Prefill work the router estimated was queued there when it dispatched the request. */
  readonly queuedTokens: number;
}

/** One origin's learned speed, as a snapshot, stats and edge replicas carry it. */
export interface LearnedSpeed {
  readonly tokensPerSecond: number;
  readonly fixedMs: number;
  /** Samples behind it (TTFT samples in the window, plus engine measurements); 0: the prior. */
  readonly samples: number;
}

class OriginSpeed {
  prior: number;
  /** What the evidence says (the fit, else the bias-corrected counters, by the fit's evidence). */
  speed: number;
  /** What routing reads once learned: `speed` against the peer-corrected prior, by evidence. */
  estimate: number;
  fixedMs = 0;
  learned = false;
  /** Accepted samples behind `speed`, age-weighted as of `evidenceAt` (NaN: the next `age`). */
  evidence = 0;
  evidenceAt = Number.NaN;
  /** A fit has run: the next starts from it (else from the prior, with Huber steps first). */
  fitted = false;
  /** The last fit's speed, and its accepted samples (age-weighted as of `fitAt`). */
  fitSpeed = Number.NaN;
  fitAccepted = 0;
  fitAt = 0;
  /** The engine's counters' speed (`#readCounters`), NaN while they cover too few tokens. */
  counterSpeed = Number.NaN;
  /** The part of `speed` its bias-corrected counters set, as of the last fit (0: the fit alone). */
  counterPart = 0;
  readonly x = new Float64Array(WINDOW);
  readonly y = new Float64Array(WINDOW);
  readonly t = new Float64Array(WINDOW);
  readonly base = new Float64Array(WINDOW);
  n = 0;
  head = 0;
  readonly engineSpeed = new Float64Array(ENGINE_WINDOW);
  readonly engineAt = new Float64Array(ENGINE_WINDOW);
  readonly engineTokens = new Float64Array(ENGINE_WINDOW);
  engines = 0;

  constructor(prior: number) {
    this.prior = prior;
    this.speed = prior;
    this.estimate = prior;
  }
}

export class SpeedLearner {
  #bySlot: (OriginSpeed | undefined)[] = [];
  /** False: samples are ignored and values only adopted (an edge replica, whose board is partial). */
  readonly #learns: boolean;
  /** Learned / prior of the origins that learned, sorted; null when a speed or prior changed. */
  #ratios: number[] | null = null;
  /** Scratch for the fit, one window long. */
  readonly #w = new Float64Array(WINDOW);
  readonly #r = new Float64Array(WINDOW);
  readonly #order: number[] = [];
  /** Scratch for the counters' median, one engine window long. */
  readonly #counterWeight = new Float64Array(ENGINE_WINDOW);
  readonly #counterOrder: number[] = [];

  constructor(learns = true) {
    this.#learns = learns;
  }

  /** The origin's prior from settings; what was learned stays (evidence beats a setting). */
  configure(slot: Slot, prior: number): void {
    const o = this.#bySlot[slot];
    if (!o) {
      this.#bySlot[slot] = new OriginSpeed(prior);
      return;
    }
    o.prior = prior;
    this.#ratios = null;
  }

  forget(slot: Slot): void {
    this.#bySlot[slot] = undefined;
    this.#ratios = null;
  }

  /**
   * The origin's prefill speed: learned (as of the last `age`), else its prior times how far off
   * the priors of the origins that learned turned out to be (`#correction`). The one accessor
   * routing reads.
   */
  speed(slot: Slot): number {
    const o = this.#at(slot);
    return o.learned ? o.estimate : clampSpeed(o.prior * this.#correction(null));
  }

  /**
   * Time passed: each learned origin's estimate weighs its evidence, aged to `now`, against its
   * peer-corrected prior. Returns whether an estimate changed. An edge replica's learner does
   * not age what it adopts: its coordinator's values arrive aged.
   */
  age(now: number): boolean {
    if (!this.#learns) return false;
    let changed = false;
    for (const o of this.#bySlot) {
      if (!o?.learned) continue;
      // Its counters' reading follows the pool's bias (learned after it, perhaps); counters
      // whose last measurements cover too few tokens read nothing (NaN), and the speed stands.
      if (o.counterPart > 0 && !Number.isNaN(o.counterSpeed)) {
        const speed = this.#evidenceSpeed(o, now);
        if (speed !== o.speed) this.#ratios = null;
        o.speed = speed;
      }
      const next = this.#estimate(o, now);
      if (next !== o.estimate) changed = true;
      o.estimate = next;
    }
    return changed;
  }

  /** `o`'s evidence speed against its peer-corrected prior, in log speed, by evidence at `now`. */
  #estimate(o: OriginSpeed, now: number): number {
    if (Number.isNaN(o.evidenceAt)) o.evidenceAt = now;
    const share = (o.evidence * decay(now - o.evidenceAt)) / FULL_EVIDENCE;
    if (share >= 1) return o.speed;
    const prior = clampSpeed(o.prior * this.#correction(o));
    const blended = Math.exp(share * Math.log(o.speed) + (1 - share) * Math.log(prior));
    // Between the two whatever the rounding.
    return Math.min(Math.max(prior, o.speed), Math.max(Math.min(prior, o.speed), blended));
  }

  /**
   * The median, over origins that learned their speed (but `except`), of learned / prior: a
   * user who set the pool's speed 0.4x too low set it too low for every origin, so an origin
   * without evidence, or whose evidence aged, takes its peers' correction. Without it, an
   * origin whose peers learned they were faster looked slow, got no work and so never learned
   * (cost sends work to the fastest). 1 when no other origin learned.
   */
  #correction(except: OriginSpeed | null): number {
    if (this.#ratios === null) {
      this.#ratios = [];
      for (const o of this.#bySlot) if (o?.learned) this.#ratios.push(o.speed / o.prior);
      this.#ratios.sort((a, b) => a - b);
    }
    let ratios = this.#ratios;
    if (except?.learned) {
      const k = ratios.indexOf(except.speed / except.prior);
      if (k >= 0) ratios = [...ratios.slice(0, k), ...ratios.slice(k + 1)];
    }
    return ratios.length === 0 ? 1 : median(ratios);
  }

  /** A completion's sample; returns whether a speed routing reads changed (any origin's). */
  observe(slot: Slot, sample: SpeedSample, now: number): boolean {
    const { ttftMs, workTokens, queuedTokens } = sample;
    if (!this.#learns || !(ttftMs >= 0) || !(workTokens >= 0) || !(queuedTokens >= 0)) return false;
    const o = this.#at(slot);
    const i = o.head;
    o.x[i] = queuedTokens + workTokens;
    o.y[i] = ttftMs;
    o.t[i] = now;
    o.base[i] = (workTokens + 1) / (workTokens + queuedTokens + 1);
    o.head = (i + 1) % WINDOW;
    o.n = Math.min(WINDOW, o.n + 1);
    return this.#refit(o, now);
  }

  /** The engine measured its own prefill speed over `tokens`; returns whether a speed changed. */
  measure(slot: Slot, tokensPerSecond: number, tokens: number, now: number): boolean {
    if (!this.#learns || !(tokens > 0)) return false;
    const o = this.#at(slot);
    const i = o.engines % ENGINE_WINDOW;
    o.engineSpeed[i] = tokensPerSecond;
    o.engineAt[i] = now;
    o.engineTokens[i] = tokens;
    o.engines++;
    // The fit stands: the reading only informs the pool's bias.
    if (o.fitted && fitShare(o, now) >= 1) {
      this.#readCounters(o, now);
      return false;
    }
    return this.#refit(o, now);
  }

  saved(slot: Slot): LearnedSpeed {
    const o = this.#at(slot);
    const samples = o.learned ? Math.max(1, o.n + Math.min(o.engines, ENGINE_WINDOW)) : 0;
    return { tokensPerSecond: this.speed(slot), fixedMs: o.fixedMs, samples };
  }

  /**
   * Take another learner's values (a snapshot's, or an edge replica its coordinator's, which
   * learns from every isolate's completions): they stand until this learner's own window fills,
   * and age from this learner's next `age` as FULL_EVIDENCE samples at most.
   */
  adopt(slot: Slot, learned: LearnedSpeed): void {
    const o = this.#at(slot);
    if (learned.samples <= 0) return;
    o.speed = clampSpeed(learned.tokensPerSecond);
    o.estimate = o.speed;
    o.fixedMs = Math.max(0, learned.fixedMs);
    o.learned = true;
    o.evidence = Math.min(learned.samples, FULL_EVIDENCE);
    o.evidenceAt = Number.NaN;
    this.#ratios = null;
  }

  #refit(o: OriginSpeed, now: number): boolean {
    if (!o.learned) o.speed = clampSpeed(o.prior * this.#correction(null));
    const before = o.speed;
    let accepted = 0;
    let fitSpeed = Number.NaN;
    if (o.n >= MIN_SAMPLES) {
      const fit = this.#fitLine(o, now, 1000 / (o.fitted ? o.fitSpeed : o.speed), o.fixedMs);
      if (fit) {
        fitSpeed = clampSpeed(1000 / fit.slope);
        o.fixedMs = fit.fixedMs;
        accepted = fit.accepted;
        o.fitted = true;
        o.fitSpeed = fitSpeed;
        o.fitAccepted = accepted;
        o.fitAt = now;
      }
    }
    const counterMass = this.#readCounters(o, now);
    if (!o.fitted && Number.isNaN(o.counterSpeed)) return this.age(now);
    // The counters' part: none where the fit stands alone, all where there is none.
    const share = Number.isNaN(o.counterSpeed) ? 1 : o.fitted ? fitShare(o, now) : 0;
    o.counterPart = 1 - share;
    o.speed = this.#evidenceSpeed(o, now);
    o.learned = true;
    o.evidence = accepted + o.counterPart * counterMass;
    o.evidenceAt = now;
    this.#ratios = null;
    return this.age(now) || o.speed !== before;
  }

  /** The fit's speed and the bias-corrected counters', in log speed, by `o.counterPart`. */
  #evidenceSpeed(o: OriginSpeed, now: number): number {
    if (o.counterPart <= 0) return o.fitSpeed;
    const corrected = clampSpeed(o.counterSpeed * this.#counterBias(o, now));
    if (o.counterPart >= 1) return corrected;
    return Math.exp(
      (1 - o.counterPart) * Math.log(o.fitSpeed) + o.counterPart * Math.log(corrected),
    );
  }

  /**
   * `o.counterSpeed`: the weighted median of its engine's measurements (each weighed by its
   * tokens, up to ENGINE_FULL_TOKENS, and its age), NaN until those in the window cover
   * ENGINE_FULL_TOKENS. Returns their weight, in samples (ENGINE_WEIGHT a full one).
   */
  #readCounters(o: OriginSpeed, now: number): number {
    const m = Math.min(o.engines, ENGINE_WINDOW);
    const order = this.#counterOrder;
    order.length = m;
    let mass = 0;
    let tokens = 0;
    for (let k = 0; k < m; k++) {
      order[k] = k;
      const w = Math.min(1, (o.engineTokens[k] as number) / ENGINE_FULL_TOKENS);
      this.#counterWeight[k] = ENGINE_WEIGHT * w * decay(now - (o.engineAt[k] as number));
      mass += this.#counterWeight[k] as number;
      tokens += o.engineTokens[k] as number;
    }
    o.counterSpeed = Number.NaN;
    if (tokens < ENGINE_FULL_TOKENS || !(mass > 0)) return 0;
    const speeds = o.engineSpeed;
    order.sort((a, b) => (speeds[a] as number) - (speeds[b] as number));
    let acc = 0;
    for (const k of order) {
      acc += this.#counterWeight[k] as number;
      if (acc >= mass / 2) {
        o.counterSpeed = speeds[k] as number;
        break;
      }
    }
    return mass;
  }

  /**
   * TTFT-fitted speed over counter speed, the median over the origins (but `except`) that have
   * both and full TTFT evidence: how far the pool's counters read below the speed the router
   * predicts with (about 3 under co-batched decode, 1 on an idle engine). 1 when no origin has
   * both: counters are then taken at their word.
   */
  #counterBias(except: OriginSpeed, now: number): number {
    const ratios: number[] = [];
    for (const o of this.#bySlot) {
      if (!o?.fitted || o === except || Number.isNaN(o.counterSpeed)) continue;
      if (fitShare(o, now) < 1) continue;
      ratios.push(o.fitSpeed / o.counterSpeed);
    }
    return ratios.length === 0 ? 1 : median(ratios.sort((a, b) => a - b));
  }

  /** The IRLS fit of ttft = F + slope X over the window, or null if it finds no rising line. */
  #fitLine(
    o: OriginSpeed,
    now: number,
    slope0: number,
    fixed0: number,
  ): { slope: number; fixedMs: number; weight: number; accepted: number } | null {
    const n = o.n;
    const w = this.#w;
    const r = this.#r;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const aged = decay(now - (o.t[i] as number));
      total += (o.base[i] as number) * aged;
      w[i] = (o.base[i] as number) * Math.max(MIN_AGE_WEIGHT, aged);
    }
    if (!(total > 0)) return null;
    let slope = slope0;
    let fixed = fixed0;
    // From the prior (which may be far off), Huber first: it converges from anywhere.
    const huberSteps = o.fitted ? 0 : HUBER_STEPS;
    const steps = huberSteps + IRLS_STEPS;
    let accepted = 0;
    for (let step = 0; step < steps; step++) {
      // Relative residuals: a TTFT's noise grows with it (batching, interference).
      for (let i = 0; i < n; i++) {
        const fitted = Math.max(MIN_TTFT_MS, fixed + slope * (o.x[i] as number));
        r[i] = Math.abs((o.y[i] as number) - fitted) / fitted;
      }
      const scale = Math.max(MIN_SCALE, 1.4826 * this.#weightedMedian(n));
      let sv = 0;
      let sx = 0;
      let sy = 0;
      for (let i = 0; i < n; i++) {
        const fitted = Math.max(MIN_TTFT_MS, fixed + slope * (o.x[i] as number));
        const robust = robustWeight((r[i] as number) / scale, step < huberSteps);
        if (step === steps - 1) accepted += robust * decay(now - (o.t[i] as number));
        const v = ((w[i] as number) * robust) / (fitted * fitted);
        r[i] = v; // reused: the sample's weight in this step
        sv += v;
        sx += v * (o.x[i] as number);
        sy += v * (o.y[i] as number);
      }
      if (!(sv > 0)) return null;
      const mx = sx / sv;
      const my = sy / sv;
      let sxx = 0;
      let sxy = 0;
      for (let i = 0; i < n; i++) {
        const dx = (o.x[i] as number) - mx;
        sxx += (r[i] as number) * dx * dx;
        sxy += (r[i] as number) * dx * ((o.y[i] as number) - my);
      }
      let nextSlope: number;
      let nextFixed: number;
      if (sxx > MIN_SPREAD * MIN_SPREAD * mx * mx * sv) {
        nextSlope = sxy / sxx;
        nextFixed = my - nextSlope * mx;
      } else {
        nextFixed = fixed;
        nextSlope = mx > 0 ? (my - fixed) / mx : slope;
      }
      if (nextFixed < 0) {
        // No negative fixed time: the line through the origin instead.
        nextFixed = 0;
        let num = 0;
        let den = 0;
        for (let i = 0; i < n; i++) {
          num += (r[i] as number) * (o.x[i] as number) * (o.y[i] as number);
          den += (r[i] as number) * (o.x[i] as number) * (o.x[i] as number);
        }
        nextSlope = den > 0 ? num / den : slope;
      }
      if (!(nextSlope > 0) || !Number.isFinite(nextSlope)) return null;
      slope = nextSlope;
      fixed = nextFixed;
    }
    return { slope, fixedMs: fixed, weight: total, accepted };
  }

  /** The weighted median of #r under the weights in #w, over the first n. */
  #weightedMedian(n: number): number {
    const order = this.#order;
    order.length = n;
    let total = 0;
    for (let i = 0; i < n; i++) {
      order[i] = i;
      total += this.#w[i] as number;
    }
    const r = this.#r;
    order.sort((a, b) => (r[a] as number) - (r[b] as number));
    let acc = 0;
    for (const i of order) {
      acc += this.#w[i] as number;
      if (acc >= total / 2) return r[i] as number;
    }
    return 0;
  }

  #at(slot: Slot): OriginSpeed {
    const o = this.#bySlot[slot];
    if (!o) throw new RangeError(`no speed in slot ${slot}`);
    return o;
  }
}

/** An IRLS weight for a residual of `u` scales: Huber's, or Tukey's biweight (0 beyond its cut). */
function robustWeight(u: number, huber: boolean): number {
  const a = Math.abs(u);
  if (huber) return a <= HUBER_CAP ? 1 : HUBER_CAP / a;
  if (a >= BIWEIGHT_CAP) return 0;
  const k = a / BIWEIGHT_CAP;
  return (1 - k * k) ** 2;
}

/** How far `o`'s fit stands alone at `now`: its accepted samples, aged, over FULL_EVIDENCE, to 1. */
function fitShare(o: OriginSpeed, now: number): number {
  return Math.min(1, (o.fitAccepted * decay(now - o.fitAt)) / FULL_EVIDENCE);
}

/** The median of a sorted, non-empty list. */
function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function decay(ageMs: number): number {
  return 2 ** (-Math.max(0, ageMs) / HALF_LIFE_MS);
}

function clampSpeed(speed: number): number {
  return Math.min(MAX_SPEED, Math.max(MIN_SPEED, speed));
}
