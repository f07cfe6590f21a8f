/**
 * Admission control in front of a pool's router (docs/architecture.md, "Admission"): a request
 * goes to an origin only while the pool's best origin would start its prefill within the pool's
 * objective (`maxWaitMs`, router/pool-wait.ts); past it, the request waits here, bounded in
 * time (`queueTimeoutMs`) and count (`maxQueued`), or is shed at once (shed.ts). A waiting
 * request is bound to an origin only when it leaves the room (late binding): `route` runs then,
 * on the cache and load of that moment, not of its arrival.
 *
 * Who goes first (fair-queue.ts): interactive before batch, and within a priority each client
 * key in turn. Who is shed, in order: a newcomer that would wait past `queueTimeoutMs` at the
 * recent admission rate (told at once instead of after the timeout); when the room is full, a
 * batch request gives its place to an interactive newcomer, and a key holding two or more
 * places more than the newcomer's gives up its newest; else the newcomer. A client that leaves
 * frees its place (`leave`).
 *
 * Pure and driven from outside: `offer` on arrival, `pump(now)` on every event that may free
 * room (a completion, a cancel, an engine report) and at `wakeAt(now)`, when the fluid queue
 * estimate drains below the objective or the oldest request's time is up. Requests that leave
 * the room are handed to `onSettle` (routed or shed), which must not call back in. The Durable
 * Object, an edge replica and the simulator hold one each over their `CoreRouter`.
 *
 * Without settings (the pool's `admission` absent) every request is routed at once.
 */

import type { Priority, RouteRequest } from "../route-request.ts";
import type { RouteDecision } from "../router/router-types.ts";
import type { AdmissionSettings } from "../settings/admission-settings.ts";
import { AdmissionRate } from "./admission-rate.ts";
import { FairQueue, type Waiting } from "./fair-queue.ts";
import { type Shed, type ShedReason, shed } from "./shed.ts";

/** What admission needs of a router: `CoreRouter` (or an edge replica's) has both. */
export interface AdmissionRouter {
  route(request: RouteRequest, now: number): RouteDecision;
  /** The pool's best origin's wait before a prefill starts, ms (router/pool-wait.ts). */
  waitMs(now: number, meanWork: number): number;
  /**
   * The request's prompt tokens as the router estimates them (its learned bytes per token:
   * router/bytes-per-token.ts); absent, the request's own estimate.
   */
  promptTokens?(request: RouteRequest): number;
}

/** How a request left admission: bound to an origin (after `waitedMs` here), or shed. */
export type Settled =
  | { readonly kind: "routed"; readonly decision: RouteDecision; readonly waitedMs: number }
  | { readonly kind: "shed"; readonly shed: Shed };

/** What `offer` says of a new request: settled at once, or waiting (`onSettle` tells later). */
export type Offered = Settled | { readonly kind: "queued" };

export type OnSettle = (id: string, settled: Settled) => void;

export interface AdmissionStats {
  enabled: boolean;
  waiting: Record<Priority, number>;
  /** Requests routed without waiting, and after waiting here. */
  admitted: { atOnce: number; afterWait: number };
  shed: Record<Priority, Partial<Record<ShedReason, number>>>;
  /** Waiting clients that left. */
  left: number;
  /** Admissions per second lately (what `queue-wait` and `Retry-After` divide by). */
  admitRatePerSecond: number;
}

interface Entry extends Waiting {
  readonly request: RouteRequest;
}

/** Span over which the admission rate is measured. */
const RATE_WINDOW_MS = 10_000;
/** Weight of each request in the running mean of prompt tokens (about the last 64 requests). */
const MEAN_WORK_WEIGHT = 1 / 64;
/** A wake-up is at least this far ahead, so rounding never spins the caller's timer. */
const MIN_WAKE_MS = 1;
const PRIORITIES: readonly Priority[] = ["interactive", "batch"];

/** The key of a request without one: all such requests share one key. */
export const ANONYMOUS_KEY = "";

/**
 * Batch is admitted only while the pool's wait is within this share of the objective, so the
 * pool keeps headroom for interactive bursts: without it, batch filled every origin to the
 * objective and bursts of interactive requests queued behind it and were shed (34% of their
 * attempts at load 1.5 with half the load batch; bench/sim/README.md, "Overload").
 */
export const BATCH_WAIT_SHARE = 0.5;

/** The wait within which a request of `band` is admitted. */
function maxWait(s: AdmissionSettings, band: number): number {
  return band === 0 ? s.maxWaitMs : s.maxWaitMs * BATCH_WAIT_SHARE;
}

function bandOf(request: RouteRequest): number {
  return request.client?.priority === "batch" ? 1 : 0;
}

export class Admission {
  readonly #router: AdmissionRouter;
  readonly #onSettle: OnSettle;
  #settings: AdmissionSettings | undefined;
  readonly #queue = new FairQueue<Entry>();
  readonly #rate = new AdmissionRate(RATE_WINDOW_MS);
  #meanWork = 0;
  #inside = false;
  readonly #admitted = { atOnce: 0, afterWait: 0 };
  readonly #shed: Record<Priority, Partial<Record<ShedReason, number>>> = {
    interactive: {},
    batch: {},
  };
  #left = 0;

  constructor(
    router: AdmissionRouter,
    settings: AdmissionSettings | undefined,
    onSettle: OnSettle,
  ) {
    this.#router = router;
    this.#settings = settings;
    this.#onSettle = onSettle;
  }

  get settings(): AdmissionSettings | undefined {
    return this.#settings;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#queue.size;
  }

  /** New settings; without any, everyone waiting is routed now. */
  configure(settings: AdmissionSettings | undefined, now: number): void {
    this.#settings = settings;
    this.pump(now);
  }

  /** A new request `id` (unique among those waiting): routed, shed, or waiting. */
  offer(id: string, request: RouteRequest, now: number): Offered {
    return this.#guarded(() => {
      const tokens = this.#router.promptTokens?.(request) ?? request.promptTokens;
      this.#meanWork =
        this.#meanWork === 0
          ? tokens
          : this.#meanWork + (tokens - this.#meanWork) * MEAN_WORK_WEIGHT;
      const s = this.#settings;
      if (!s) return this.#routeNow(request, now);
      this.#pump(now, s);
      const band = bandOf(request);
      if (this.#queue.sizeUpTo(band) === 0 && this.#room(now, s, band)) {
        return this.#routeNow(request, now);
      }
      const key = request.client?.key ?? ANONYMOUS_KEY;
      if (s.maxQueued === 0 || s.queueTimeoutMs === 0)
        return this.#refuse("queue-full", band, key, now);
      const ahead = this.#queue.ahead(band, key);
      const rate = this.#rate.perMs(now);
      if (rate > 0 && ahead / rate > s.queueTimeoutMs) {
        return this.#refuse("queue-wait", band, key, now);
      }
      if (this.#queue.size >= s.maxQueued) {
        const victim = this.#victim(band, key);
        if (!victim) {
          const mine = this.#queue.longestKey(band, true) === key && this.#queue.keys(band) > 1;
          return this.#refuse(mine ? "over-share" : "queue-full", band, key, now);
        }
        this.#queue.remove(victim.id);
        const reason = victim.band > band ? "displaced" : "over-share";
        this.#settle(victim.id, this.#shedding(reason, victim, now));
      }
      this.#queue.push({ id, key, band, since: now, request });
      return { kind: "queued" };
    });
  }

  /** A waiting client left: its place is free. False if `id` was not waiting. */
  leave(id: string): boolean {
    if (!this.#queue.remove(id)) return false;
    this.#left++;
    return true;
  }

  /** Route waiting requests while the pool has room, then shed those whose time is up. */
  pump(now: number): void {
    this.#guarded(() => this.#pump(now, this.#settings));
  }

  /**
   * When `pump` should next run if nothing else happens: when the pool's estimated wait has
   * drained to the objective, or the oldest request's time is up; null while nobody waits.
   */
  wakeAt(now: number): number | null {
    const s = this.#settings;
    const oldest = this.#queue.oldest();
    if (!s || !oldest) return null;
    const over = this.#router.waitMs(now, this.#meanWork) - maxWait(s, this.#queue.firstBand());
    return Math.min(oldest.since + s.queueTimeoutMs, now + Math.max(MIN_WAKE_MS, over));
  }

  stats(now: number): AdmissionStats {
    return {
      enabled: this.#settings !== undefined,
      waiting: { interactive: this.#queue.sizeOf(0), batch: this.#queue.sizeOf(1) },
      admitted: { ...this.#admitted },
      shed: { interactive: { ...this.#shed.interactive }, batch: { ...this.#shed.batch } },
      left: this.#left,
      admitRatePerSecond: this.#rate.perMs(now) * 1000,
    };
  }

  /** Test-only: the waiting room's books agree. */
  checkInvariants(): void {
    this.#queue.checkInvariants();
  }

  #pump(now: number, s: AdmissionSettings | undefined): void {
    while (this.#queue.size > 0 && (!s || this.#room(now, s, this.#queue.firstBand()))) {
      const entry = this.#queue.shift() as Entry;
      const decision = this.#router.route(entry.request, now);
      this.#rate.add(now);
      this.#admitted.afterWait++;
      this.#settle(entry.id, { kind: "routed", decision, waitedMs: now - entry.since });
    }
    if (!s) return;
    // The same sum `wakeAt` names: `now - since >= timeout` can round short at that instant.
    for (let o = this.#queue.oldest(); o && o.since + s.queueTimeoutMs <= now; ) {
      this.#queue.remove(o.id);
      this.#settle(o.id, this.#shedding("queue-timeout", o, now));
      o = this.#queue.oldest();
    }
  }

  #room(now: number, s: AdmissionSettings, band: number): boolean {
    return this.#router.waitMs(now, this.#meanWork) <= maxWait(s, band);
  }

  #routeNow(request: RouteRequest, now: number): Settled {
    const decision = this.#router.route(request, now);
    this.#rate.add(now);
    this.#admitted.atOnce++;
    return { kind: "routed", decision, waitedMs: 0 };
  }

  /**
   * Whose place a newcomer of `band` and `key` takes in a full room: the newest request of the
   * longest key of a less important band; else of its own band's longest key, if that key
   * holds at least two more than the newcomer's; else nobody's (the newcomer is shed).
   */
  #victim(band: number, key: string): Entry | undefined {
    const q = this.#queue;
    const last = q.lastBand();
    if (last > band) return q.newest(last, q.longestKey(last) as string);
    if (last < band) return undefined;
    const longest = q.longestKey(band) as string;
    return longest !== key && q.count(band, longest) >= q.count(band, key) + 2
      ? q.newest(band, longest)
      : undefined;
  }

  #refuse(reason: ShedReason, band: number, key: string, now: number): Settled {
    return this.#shedding(reason, { band, key, since: now }, now);
  }

  /** The shed of a request of `band` and `key` waiting since `since`, counted. */
  #shedding(
    reason: ShedReason,
    { band, key, since }: Pick<Entry, "band" | "key" | "since">,
    now: number,
  ): Settled {
    const counts = this.#shed[PRIORITIES[band] as Priority];
    counts[reason] = (counts[reason] ?? 0) + 1;
    // Until its band (and those before) would have admitted it, at the recent rate.
    const rate = this.#rate.perMs(now);
    const retryAfterMs = rate > 0 ? (this.#queue.ahead(band, key) + 1) / rate : 0;
    return { kind: "shed", shed: shed(reason, retryAfterMs, now - since) };
  }

  #settle(id: string, settled: Settled): void {
    this.#onSettle(id, settled);
  }

  #guarded<T>(run: () => T): T {
    if (this.#inside) throw new Error("Admission: onSettle called back into admission");
    this.#inside = true;
    try {
      return run();
    } finally {
      this.#inside = false;
    }
  }
}
