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
 * What routing reads is shrunk toward the pool (empirical Bayes), as far as each fit's
 * precision says. The fit returns its log speed's standard error se: atanh of the slope's
 * relative error sigma / sqrt(sxx) / slope (sigma the fit's scale, sxx X's weighted spread, the
 * weights each sample's inverse variance in units of sigma), the half-width of the log of the
 * slope's one-error interval, so infinite once that interval reaches 0 (an infinitely fast
 * origin not ruled out), and infinite where X's spread cannot tell F from S. An origin's
 * deviation from the pool, d = log(evidence speed / peer-corrected prior), is kept in the part
 * B = tau^2 / (tau^2 + se^2), tau^2 the spread of true speeds between the pool's origins:
 * (1.4826 MAD of log(speed / prior))^2 over the learned origins with a finite se, less their
 * median se^2, at least MIN_TAU^2. In a pool of one GPU kind the deviations are the fits' noise,
 * tau sits at its floor, and every origin reads near the pool's speed; in a mixed one (H100
 * beside L40S, d about 0.5 either way, precise) tau is wide and the deviations stay; an origin
 * whose TTFTs are swamped by memory waits the router's queue does not model (KV full: its own
 * tokens no longer explain its TTFT, and on sessions-8 its slope read 16x the truth and `cost`
 * sent it nearly every request) has an se many times tau, or infinite, and reads the pool's.
 * With under MIN_POOL such origins there is no pool to measure a spread from and d is mostly
 * the prior's own error (alone, the correction is 1): tau is DEFAULT_TAU, wide enough to keep a
 * precisely measured deviation (a prior 0.4x or 2.5x off) and still discard a fit whose se is
 * several times it. Counters, where they set the speed, count as exact (se is the fit's times
 * its part), and so do adopted values (their learner shrank them). With the aging below, in
 * log speed from the same peer-corrected prior: estimate = prior * exp(share * B * d), share
 * how much of the evidence is still there, B how much of what it says its precision supports.
 * The correction reads the evidence speeds, not the shrunk ones (no fixed point to solve). The
 * spread is remeasured with the ratios when a speed changes (O(n log n)); an origin's median of
 * the others is read in place (O(log n)), so `age` stays O(n log n).
 * Its cost: a lone origin really unlike the rest (one H100 among seven A100s) meets tau at its
 * floor, since the MAD does not see a minority of one: 2x faster, it read 1.83-1.95x with 5%
 * noise, about 1.5x with 20% (the unit tests' generator). Tried and dropped: a mixture prior
 * (each origin of the pool's kind, or, at odds 1:9, of spread DEFAULT_TAU) kept that lone
 * origin within 8% but let the swamped one read up to 178x slow (a 70x-slow reading with se 1
 * looks real to the wide kind). The plain relative error, without atanh, gave that reading se
 * 1.0 where the slope's interval reached 0 (under the mixture it read 0.06x); with the pool's
 * spread alone either form kept the swamped origin near its peers.
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
/** The least spread of true log speeds between a pool's origins (5%: clocks, thermals). */
const MIN_TAU = 0.05;
/** The spread assumed with under MIN_POOL origins with evidence (no pool to measure it from). */
const DEFAULT_TAU = Math.log(4);
/** Origins with evidence needed to measure the pool's spread. */
const MIN_POOL = 3;
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
  /** The last fit's standard error of log speed (Infinity: the slope was unidentified). */
  fitSe = 0;
  fitAccepted = 0;
  fitAt = 0;
  /** The engine's counters' speed (`#readCounters`), NaN while they cover too few tokens. */
  counterSpeed = Number.NaN;
  /** The part of `speed` its bias-corrected counters set, as of the last fit (0: the fit alone). */
  counterPart = 0;
  /** The standard error of log `speed` (`#speedSe`); 0 for adopted values, taken as given. */
  se = 0;
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
  /** The pool's spread of true log speeds, squared (`#spread`), as of `#ratios`. */
  #tau2 = DEFAULT_TAU * DEFAULT_TAU;
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

  /**
   * `o`'s evidence speed against its peer-corrected prior, in log speed: the deviation d kept
   * in the part its evidence, aged to `now`, supports, times the part its precision does.
   */
  #estimate(o: OriginSpeed, now: number): number {
    if (Number.isNaN(o.evidenceAt)) o.evidenceAt = now;
    const share = Math.min(1, (o.evidence * decay(now - o.evidenceAt)) / FULL_EVIDENCE);
    if (share >= 1 && o.se === 0) return o.speed;
    const prior = clampSpeed(o.prior * this.#correction(o));
    const d = Math.log(o.speed / prior);
    const kept = share * this.#precision(o.se);
    if (kept >= 1) return o.speed;
    const blended = prior * Math.exp(kept * d);
    // Between the two whatever the rounding.
    return Math.min(Math.max(prior, o.speed), Math.max(Math.min(prior, o.speed), blended));
  }

  /**
   * The part of a log-speed deviation from the pool, measured with standard error `se`, that is
   * real: tau^2 / (tau^2 + se^2), tau^2 the pool's spread (`#spread`).
   */
  #precision(se: number): number {
    if (se === 0) return 1;
    if (!Number.isFinite(se)) return 0;
    this.#pool();
    return this.#tau2 / (this.#tau2 + se * se);
  }

  /**
   * The median, over origins that learned their speed (but `except`), of learned / prior: a
   * user who set the pool's speed 0.4x too low set it too low for every origin, so an origin
   * without evidence, or whose evidence aged, takes its peers' correction. Without it, an
   * origin whose peers learned they were faster looked slow, got no work and so never learned
   * (cost sends work to the fastest). 1 when no other origin learned.
   */
  #correction(except: OriginSpeed | null): number {
    const ratios = this.#pool();
    const own = except?.learned ? except.speed / except.prior : Number.NaN;
    const k = lowerBound(ratios, own);
    if (ratios[k] !== own) return ratios.length === 0 ? 1 : median(ratios);
    // The median of the others: the sorted list with position k left out, read in place.
    const m = ratios.length - 1;
    if (m === 0) return 1;
    const at = (p: number) => ratios[p < k ? p : p + 1] as number;
    const mid = m >> 1;
    return m % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
  }

  /** `#ratios`, rebuilt (with `#tau2`) when a speed or prior changed. O(n log n) then. */
  #pool(): number[] {
    if (this.#ratios === null) {
      this.#ratios = [];
      for (const o of this.#bySlot) if (o?.learned) this.#ratios.push(o.speed / o.prior);
      this.#ratios.sort((a, b) => a - b);
      this.#tau2 = this.#spread();
    }
    return this.#ratios;
  }

  /**
   * The pool's spread of true log speeds, squared: over the learned origins whose speed has a
   * finite error, (1.4826 MAD of log(speed / prior))^2 less their median se^2, at least
   * MIN_TAU^2; DEFAULT_TAU^2 with under MIN_POOL of them (see the header).
   */
  #spread(): number {
    const logs: number[] = [];
    const se2: number[] = [];
    for (const o of this.#bySlot) {
      if (!o?.learned || !Number.isFinite(o.se)) continue;
      logs.push(Math.log(o.speed / o.prior));
      se2.push(o.se * o.se);
    }
    if (logs.length < MIN_POOL) return DEFAULT_TAU * DEFAULT_TAU;
    const mid = median(logs.sort((a, b) => a - b));
    const mad = median(logs.map((l) => Math.abs(l - mid)).sort((a, b) => a - b));
    const noise = median(se2.sort((a, b) => a - b));
    return Math.max(MIN_TAU * MIN_TAU, (1.4826 * mad) ** 2 - noise);
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
    o.se = 0;
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
        o.fitSe = fit.se;
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
    // Counters taken as exact (their bias is the pool's): the fit's error in its part only.
    o.se = o.counterPart >= 1 ? 0 : (1 - o.counterPart) * o.fitSe;
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
  ): { slope: number; fixedMs: number; weight: number; accepted: number; se: number } | null {
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
    let se = Number.POSITIVE_INFINITY;
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
      // The slope's standard error, relative: scale / sqrt(the weighted spread of X) (the
      // weights are the samples' inverse variances in units of the scale), over the slope.
      let spread = 0;
      if (sxx > MIN_SPREAD * MIN_SPREAD * mx * mx * sv) {
        nextSlope = sxy / sxx;
        nextFixed = my - nextSlope * mx;
        spread = sxx;
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
        spread = den;
      }
      if (!(nextSlope > 0) || !Number.isFinite(nextSlope)) return null;
      const relative = spread > 0 ? scale / Math.sqrt(spread) / nextSlope : 1;
      se = relative < 1 ? Math.atanh(relative) : Number.POSITIVE_INFINITY;
      slope = nextSlope;
      fixed = nextFixed;
    }
    return { slope, fixedMs: fixed, weight: total, accepted, se };
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

/** The first position in sorted `list` whose value is not below `value`. */
function lowerBound(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
