/**
 * Per-origin load as the router knows it: requests in flight and their leases, a fluid estimate
 * of the prefill work queued at each origin, the engine's last report with its age, health and a
 * circuit breaker. Origins are named by their slot (origin-indexes.ts). Pure state over the caller's clock (milliseconds), shared by the Durable
 * Object, the Worker's fallback and the simulator.
 *
 * Queued prefill is a fluid FIFO per origin: every routed request enqueues its prefill work (its
 * uncached tokens weighted for attention, in short-context token equivalents: prefill-work.ts),
 * and the queue drains at the origin's prefill speed. Two kinds of truth correct the estimate:
 * a success proves everything queued up to that request was prefilled (served >= its position),
 * and an engine report of w waiting requests proves at least the newest w of our requests there
 * have not started (queued >= their tokens).
 *
 * Leases: a routed request holds its load until `release`; if its completion is never reported
 * the lease expires after `leaseMs`, so a lost `complete` cannot leak load forever.
 *
 * Prefilling tokens: the uncached prompt tokens of requests whose first token has not been seen,
 * counted exactly (Dynamo's active prefill tokens) when the caller reports first tokens
 * (`firstToken`); otherwise a request counts until it ends. Active chunks (active-chunks.ts): the
 * distinct prompt chunks in flight, kept only when `trackActiveChunks` is set.
 *
 * Measured prefill: the engine's last reported prefill speed (a `prefill-rate` event) with its
 * age, kept for operators and for calibration; the fluid queue still drains at the configured
 * speed.
 */
import type { Health, LoadReport, PrefillRate } from "../engine-events.ts";
import type { Slot } from "../origin-indexes.ts";
import { ActiveChunks } from "./active-chunks.ts";
import { CircuitBreaker, type CircuitState } from "./circuit-breaker.ts";

export interface LoadBoardOptions {
  leaseMs: number;
  failureThreshold: number;
  cooldownMs: number;
  reportFreshMs: number;
  reportStaleMs: number;
  /** Keep each origin's distinct in-flight prompt chunks (for policies that read them). */
  trackActiveChunks?: boolean;
}

/** What a lease needs beyond its size, for prefilling tokens and active chunks. */
export interface LeaseDetail {
  /** Prompt tokens the origin is expected to prefill (not cached there); default all. */
  uncachedTokens?: number;
  /** The prompt's chunk hashes, for active chunks. */
  hashes?: ArrayLike<number>;
  /** The prompt ends in a partial chunk (tokens past its last full chunk). */
  partial?: boolean;
}

export interface Lease {
  readonly ticket: string;
  readonly origin: Slot;
  readonly promptTokens: number;
  readonly prefillWork: number;
  readonly uncachedTokens: number;
  readonly hashes: ArrayLike<number>;
  readonly partial: boolean;
  /** Position in the origin's fluid queue just after this request's prefill. */
  readonly queueEnd: number;
  readonly expires: number;
  /** No first token seen yet. */
  prefilling: boolean;
}

/** The engine's last report as a policy reads it (`OriginView.engine`); KV usage in [0, 1]. */
export interface EngineLoad extends Readonly<LoadReport> {
  /** 1 for a report younger than the fresh window, falling linearly to 0 at the stale limit. */
  readonly freshness: number;
}

/** The engine's last report as the board keeps it: when it came (the caller's clock). */
export interface EngineReport extends LoadReport {
  at: number;
}

/**
 * The requests the router sent an origin and has not seen end, as it counts them: the one load
 * shape the board's view, an edge replica's overlay and edge coordination's messages share.
 */
export interface RequestLoad {
  outstanding: number;
  activeTokens: number;
  /** Prefill work queued or running there (short-context token equivalents, prefill-work.ts). */
  queuedPrefillTokens: number;
  prefillingTokens: number;
}

/** The engine's last measured prefill speed and how old it is. */
export interface MeasuredPrefill extends PrefillRate {
  ageMs: number;
}

class OriginLoad {
  outstanding = 0;
  activeTokens = 0;
  prefillingTokens = 0;
  enqueued = 0;
  served = 0;
  servedAt = 0;
  report: EngineReport | null = null;
  prefillRate: (PrefillRate & { at: number }) | null = null;
  health: Health = "up";
  readonly circuit = new CircuitBreaker();
  speed: number;
  constructor(speed: number) {
    this.speed = speed;
  }

  advance(now: number): void {
    if (now > this.servedAt) {
      this.served = Math.min(
        this.enqueued,
        this.served + (this.speed * (now - this.servedAt)) / 1000,
      );
      this.servedAt = now;
    }
  }
}

export interface OriginLoadView extends RequestLoad {
  /** Distinct in-flight prompt chunks, or null when not tracked. */
  activeChunks: number | null;
  engine: EngineLoad | null;
  health: Health;
  circuit: CircuitState;
  eligible: boolean;
  reportAgeMs: number | null;
  /** The engine's last measured prefill speed, or null if it never reported one. */
  measuredPrefill: MeasuredPrefill | null;
  consecutiveFailures: number;
}

/** How much an engine report of this age counts: 1 until `freshMs`, falling to 0 at `staleMs`. */
export function reportFreshness(ageMs: number, freshMs: number, staleMs: number): number {
  if (ageMs <= freshMs) return 1;
  return Math.max(0, (staleMs - ageMs) / Math.max(1, staleMs - freshMs));
}

export class LoadBoard {
  #origins: OriginLoad[] = [];
  #leases = new Map<string, Lease>();
  #nextExpiry = Number.POSITIVE_INFINITY;
  #active: ActiveChunks | null = null;
  #options!: LoadBoardOptions;

  constructor(options: LoadBoardOptions) {
    this.options = options;
  }

  get options(): LoadBoardOptions {
    return this.#options;
  }

  /** New options; turning `trackActiveChunks` on starts from the leases held now. */
  set options(options: LoadBoardOptions) {
    this.#options = options;
    if (!options.trackActiveChunks) {
      this.#active = null;
    } else if (!this.#active) {
      const active = new ActiveChunks();
      for (const l of this.#leases.values()) active.add(l.origin, l.hashes, l.partial);
      this.#active = active;
    }
  }

  /** Make slot `i` exist with prefill speed `speed` (keeps its state if it already exists). */
  ensure(i: Slot, speed: number): void {
    const o = this.#origins[i];
    if (o) o.speed = speed;
    else this.#origins[i] = new OriginLoad(speed);
  }

  /** Slot `i`'s queue drains at `speed` from `now` on (what drained before, at the old one). */
  setSpeed(i: Slot, speed: number, now: number): void {
    const o = this.#at(i);
    o.advance(now);
    o.speed = speed;
  }

  /** Prefill work the router estimates is queued at slot `i` (the view's queuedPrefillTokens). */
  queued(i: Slot, now: number): number {
    const o = this.#at(i);
    o.advance(now);
    return o.enqueued - o.served;
  }

  /** Forget slot `i` (origin removed from settings); its leases are dropped. */
  remove(i: Slot): void {
    delete this.#origins[i];
    this.#active?.clear(i);
    for (const [ticket, lease] of this.#leases) if (lease.origin === i) this.#leases.delete(ticket);
  }

  #at(i: Slot): OriginLoad {
    const o = this.#origins[i];
    if (!o) throw new RangeError(`no origin in slot ${i}`);
    return o;
  }

  eligible(i: Slot, now: number): boolean {
    const o = this.#at(i);
    return o.health === "up" && o.circuit.allows(now, this.options);
  }

  view(i: Slot, now: number): OriginLoadView {
    const o = this.#at(i);
    o.advance(now);
    const { reportFreshMs, reportStaleMs } = this.options;
    let engine: EngineLoad | null = null;
    let reportAgeMs: number | null = null;
    if (o.report) {
      reportAgeMs = now - o.report.at;
      const freshness = reportFreshness(reportAgeMs, reportFreshMs, reportStaleMs);
      if (freshness > 0) engine = { ...o.report, freshness };
    }
    return {
      outstanding: o.outstanding,
      activeTokens: o.activeTokens,
      queuedPrefillTokens: o.enqueued - o.served,
      prefillingTokens: o.prefillingTokens,
      activeChunks: this.#active ? this.#active.distinct(i) : null,
      engine,
      health: o.health,
      circuit: o.circuit.state(now, this.options),
      eligible: this.eligible(i, now),
      reportAgeMs,
      measuredPrefill: o.prefillRate && {
        tokensPerSecond: o.prefillRate.tokensPerSecond,
        tokens: o.prefillRate.tokens,
        ageMs: now - o.prefillRate.at,
      },
      consecutiveFailures: o.circuit.consecutiveFailures,
    };
  }

  /**
   * Blocks a prompt of `hashes` would add to origin `i`'s in-flight chunks: those not already
   * there, or all of them when active chunks are not tracked.
   */
  addedChunks(i: Slot, hashes: ArrayLike<number>, partial: boolean): number {
    return this.#active
      ? this.#active.added(i, hashes, partial)
      : hashes.length + (partial ? 1 : 0);
  }

  /** Count a routed request against origin `i` until released or expired. */
  lease(
    ticket: string,
    i: Slot,
    promptTokens: number,
    prefillWork: number,
    now: number,
    detail: LeaseDetail = {},
  ): Lease {
    const o = this.#at(i);
    o.advance(now);
    o.enqueued += prefillWork;
    o.outstanding++;
    o.activeTokens += promptTokens;
    const uncachedTokens = detail.uncachedTokens ?? promptTokens;
    o.prefillingTokens += uncachedTokens;
    o.circuit.onSend(now, this.options);
    const lease: Lease = {
      ticket,
      origin: i,
      promptTokens,
      prefillWork,
      uncachedTokens,
      hashes: detail.hashes ?? [],
      partial: detail.partial ?? false,
      queueEnd: o.enqueued,
      expires: now + this.options.leaseMs,
      prefilling: true,
    };
    this.#active?.add(i, lease.hashes, lease.partial);
    this.#leases.set(ticket, lease);
    this.#nextExpiry = Math.min(this.#nextExpiry, lease.expires);
    return lease;
  }

  /** End a lease: `prefilled` says whether the origin did its prefill (it answered). */
  release(ticket: string, prefilled: boolean, now: number): Lease | undefined {
    const lease = this.#leases.get(ticket);
    if (!lease) return undefined;
    this.#leases.delete(ticket);
    const o = this.#origins[lease.origin];
    if (!o) return lease;
    o.advance(now);
    o.outstanding--;
    o.activeTokens -= lease.promptTokens;
    if (lease.prefilling) o.prefillingTokens -= lease.uncachedTokens;
    this.#active?.remove(lease.origin, lease.hashes, lease.partial);
    if (prefilled) {
      o.served = Math.max(o.served, Math.min(o.enqueued, lease.queueEnd));
    } else {
      const unserved = Math.min(lease.prefillWork, Math.max(0, lease.queueEnd - o.served));
      o.enqueued -= unserved;
    }
    return lease;
  }

  /**
   * The request's first token came: its prefill is done, so it stops counting as prefilling and
   * everything queued up to it was served. False for an unknown ticket.
   */
  firstToken(ticket: string, now: number): boolean {
    const lease = this.#leases.get(ticket);
    const o = lease && this.#origins[lease.origin];
    if (!lease || !o) return false;
    if (lease.prefilling) {
      lease.prefilling = false;
      o.prefillingTokens -= lease.uncachedTokens;
      o.advance(now);
      o.served = Math.max(o.served, Math.min(o.enqueued, lease.queueEnd));
    }
    return true;
  }

  /**
   * End a lease without reading the clock (its holder is gone): its origin's counts fall and
   * its work not yet served, as of the origin's last reading, leaves the queue.
   */
  drop(ticket: string): void {
    this.release(ticket, false, Number.NEGATIVE_INFINITY);
  }

  /** Release every lease past its expiry; returns them. */
  expire(now: number): Lease[] {
    if (now < this.#nextExpiry) return [];
    const expired: Lease[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const lease of this.#leases.values()) {
      if (lease.expires <= now) expired.push(lease);
      else next = Math.min(next, lease.expires);
    }
    this.#nextExpiry = next;
    for (const lease of expired) {
      this.release(lease.ticket, true, now);
      this.#origins[lease.origin]?.circuit.onAbandon();
    }
    return expired;
  }

  lookup(ticket: string): Lease | undefined {
    return this.#leases.get(ticket);
  }

  get outstanding(): number {
    return this.#leases.size;
  }

  onSuccess(i: Slot): void {
    this.#origins[i]?.circuit.onSuccess();
  }

  /** A request ended without telling whether the origin works (see CircuitBreaker.onAbandon). */
  onAbandon(i: Slot): void {
    this.#origins[i]?.circuit.onAbandon();
  }

  onFailure(i: Slot, now: number): void {
    this.#origins[i]?.circuit.onFailure(now, this.options);
  }

  report(i: Slot, report: Omit<EngineReport, "at">, now: number): void {
    const o = this.#at(i);
    o.report = { ...report, at: now };
    if (report.waiting === 0) return;
    // The newest `waiting` of our requests there have not started: queued >= their tokens.
    const mine: Lease[] = [];
    for (const lease of this.#leases.values()) if (lease.origin === i) mine.push(lease);
    let waitingTokens = 0;
    for (let k = mine.length - 1; k >= 0 && k >= mine.length - report.waiting; k--) {
      waitingTokens += (mine[k] as Lease).prefillWork;
    }
    o.advance(now);
    o.served = Math.min(o.served, o.enqueued - waitingTokens);
  }

  /** The engine measured its prefill speed (kept, not yet used to drain the queue). */
  reportPrefillRate(i: Slot, rate: PrefillRate, now: number): void {
    this.#at(i).prefillRate = {
      tokensPerSecond: rate.tokensPerSecond,
      tokens: rate.tokens,
      at: now,
    };
  }

  setHealth(i: Slot, health: Health): void {
    this.#at(i).health = health;
  }
}
