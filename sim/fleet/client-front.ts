/**
 * What stands in front of a simulated pool in an overload replay (`npm run bench:overload`):
 * the clients, and the pool's admission (src/core/admission, the code the Durable Object
 * runs, over the same `CoreRouter`).
 *
 * Each request of the workload is one client with a key and a priority. It sends an attempt,
 * waits at most `timeoutMs` for its first token and then gives up: a request waiting at the
 * router leaves the queue (`Admission.leave`), one at an engine is aborted there (vLLM aborts
 * a request whose client disconnected) and its ticket completed as the Worker reports a client
 * that left (`{ ok: false }`). A shed or timed-out attempt is retried up to `maxRetries` times,
 * as OpenAI's clients do: after `Retry-After` when it is under 60 s, else after their backoff
 * (0.5 s doubling to 8 s, less up to 25% jitter; openai-node `calculateDefaultRetryTimeoutMillis`).
 * With admission off (`admission: null`) every attempt is routed at once, as before admission
 * existed, so the same clients show what the pool did without it.
 *
 * Driven by the fleet simulator: `arrive` for each request, `event` for what it scheduled
 * (retries, timeouts, admission wake-ups), `firstToken` and `released` from the engines, and
 * `settle(now)` after every event, which runs admission's pump when something may have freed
 * room and keeps one wake-up scheduled at `Admission.wakeAt`.
 */
import {
  Admission,
  type AdmissionRouter,
  type Offered,
  type Settled,
} from "../../src/core/admission/admission.ts";
import { createRng, type Rng } from "../../src/core/rng.ts";
import type { RouteClient, RouteRequest } from "../../src/core/route-request.ts";
import type { RouteDecision } from "../../src/core/router/router-types.ts";
import type { AdmissionSettings } from "../../src/core/settings/admission-settings.ts";

export interface ClientModel {
  /** A client gives up on an attempt without a first token after this long (ms). */
  timeoutMs: number;
  /** Attempts after the first (OpenAI's clients: 2). */
  maxRetries: number;
}

export interface FrontConfig {
  /** The pool's admission settings; null: admission off. */
  admission: AdmissionSettings | null;
  clients: ClientModel;
  /** Request i's client (key and priority). */
  clientOf: (i: number) => RouteClient;
  /** Seeds the clients' backoff jitter. */
  seed: number;
}

export type FrontEvent =
  | { readonly kind: "retry"; readonly i: number }
  | { readonly kind: "timeout"; readonly i: number; readonly attempt: number }
  | { readonly kind: "wake"; readonly version: number };

export interface FrontHooks {
  /** Request i's attempt was routed at `t`: send it to its origin. */
  place(i: number, decision: RouteDecision, t: number): void;
  /** Request i's client left at `t` before its first token: abort it and tell the router. */
  abandon(i: number, t: number): void;
  /** Call `event(payload, t)` at `t`. */
  schedule(t: number, payload: FrontEvent): void;
}

/** Where a request's current attempt is. */
const IDLE = 0;
const WAITING = 1;
const AT_ENGINE = 2;
const SERVED = 3;
const FAILED = 4;

/** What happened to every request and attempt (front-summary.ts reduces it). */
export interface FrontRecord {
  /** Attempts each request made. */
  attempts: Uint8Array;
  /** 1 when a request got its first token, else 0. */
  served: Uint8Array;
  /** The served attempt's time to first token as its client saw it (queue wait included). */
  ttftMs: Float64Array;
  /** Of that, the time it waited at the router. */
  waitedMs: Float64Array;
  /** Each shed attempt: its request and how long it took to be told (ms). */
  shed: { i: number; afterMs: number; reason: string }[];
  /** Attempts whose client gave up, per request. */
  timeouts: Uint8Array;
  /** Attempts that went to an engine (routed), per request. */
  routed: Uint8Array;
}

const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 8000;
const RETRY_AFTER_HONOURED_MS = 60_000;

export class ClientFront {
  readonly record: FrontRecord;
  readonly #config: FrontConfig;
  readonly #hooks: FrontHooks;
  readonly #admission: Admission;
  readonly #request: (i: number) => RouteRequest;
  readonly #rng: Rng;
  readonly #where: Uint8Array;
  readonly #startedAt: Float64Array;
  /** Settled by admission while it ran; handled once it returned (it must not be re-entered). */
  readonly #settledLater: [number, Settled][] = [];
  #failed = 0;
  #dirty = false;
  #wakeAt = Number.POSITIVE_INFINITY;
  #wakeVersion = 0;

  constructor(
    size: number,
    router: AdmissionRouter,
    request: (i: number) => RouteRequest,
    config: FrontConfig,
    hooks: FrontHooks,
  ) {
    this.#config = config;
    this.#hooks = hooks;
    this.#request = request;
    this.#rng = createRng(config.seed);
    this.#where = new Uint8Array(size);
    this.#startedAt = new Float64Array(size);
    this.record = {
      attempts: new Uint8Array(size),
      served: new Uint8Array(size),
      ttftMs: new Float64Array(size).fill(Number.NaN),
      waitedMs: new Float64Array(size).fill(Number.NaN),
      shed: [],
      timeouts: new Uint8Array(size),
      routed: new Uint8Array(size),
    };
    this.#admission = new Admission(router, config.admission ?? undefined, (id, s) =>
      this.#settledLater.push([Number(id), s]),
    );
  }

  /** Requests whose every attempt was shed or given up: they will never complete. */
  get failed(): number {
    return this.#failed;
  }

  /** Request i's first attempt. */
  arrive(i: number, t: number): void {
    this.#attempt(i, t);
  }

  event(e: FrontEvent, t: number): void {
    switch (e.kind) {
      case "retry":
        this.#attempt(e.i, t);
        break;
      case "timeout":
        if (this.record.attempts[e.i] === e.attempt) this.#giveUp(e.i, t);
        break;
      case "wake":
        if (e.version === this.#wakeVersion) {
          this.#wakeAt = Number.POSITIVE_INFINITY;
          this.#dirty = true;
        }
        break;
    }
  }

  /** Request i's first token came at `t`. */
  firstToken(i: number, t: number): void {
    if (this.#where[i] !== AT_ENGINE) return;
    this.#where[i] = SERVED;
    this.record.served[i] = 1;
    this.record.ttftMs[i] = t - (this.#startedAt[i] as number);
  }

  /** An engine released a request (it ended or was aborted): the pool may have room. */
  released(): void {
    this.#dirty = true;
  }

  /** The router heard an engine report: its load estimate moved. */
  reported(): void {
    this.#dirty = true;
  }

  /** After every event: let admission admit what it now can, and schedule its next wake-up. */
  settle(now: number): void {
    if (this.#config.admission === null) return;
    if (this.#dirty) {
      this.#dirty = false;
      this.#admission.pump(now);
      this.#handleSettled(now);
    }
    const wake = this.#admission.wakeAt(now);
    if (wake !== null && wake < this.#wakeAt) {
      this.#wakeAt = wake;
      this.#hooks.schedule(wake, { kind: "wake", version: ++this.#wakeVersion });
    }
  }

  #attempt(i: number, t: number): void {
    const attempt = bump(this.record.attempts, i);
    this.#startedAt[i] = t;
    this.#where[i] = WAITING;
    const { timeoutMs } = this.#config.clients;
    if (Number.isFinite(timeoutMs)) {
      this.#hooks.schedule(t + timeoutMs, { kind: "timeout", i, attempt });
    }
    const offered: Offered = this.#admission.offer(String(i), this.#request(i), t);
    this.#handleSettled(t);
    if (offered.kind !== "queued") this.#settled(i, offered, t);
  }

  #handleSettled(t: number): void {
    const list = this.#settledLater;
    while (list.length > 0) {
      const [i, s] = list.shift() as [number, Settled];
      this.#settled(i, s, t);
    }
  }

  #settled(i: number, s: Settled, t: number): void {
    if (s.kind === "routed") {
      this.#where[i] = AT_ENGINE;
      this.record.waitedMs[i] = s.waitedMs;
      bump(this.record.routed, i);
      this.#hooks.place(i, s.decision, t);
      return;
    }
    this.#where[i] = IDLE;
    this.record.shed.push({ i, afterMs: s.shed.waitedMs, reason: s.shed.reason });
    const after = s.shed.retryAfterMs < RETRY_AFTER_HONOURED_MS ? s.shed.retryAfterMs : null;
    this.#retry(i, t, after);
  }

  /** The client of request i stops waiting for its current attempt at `t`. */
  #giveUp(i: number, t: number): void {
    const where = this.#where[i];
    if (where === WAITING) {
      this.#admission.leave(String(i));
    } else if (where === AT_ENGINE) {
      this.#hooks.abandon(i, t);
      this.#dirty = true;
    } else {
      return;
    }
    bump(this.record.timeouts, i);
    this.#where[i] = IDLE;
    this.#retry(i, t, null);
  }

  /** Try request i again after `afterMs` (null: the client's backoff), if retries remain. */
  #retry(i: number, t: number, afterMs: number | null): void {
    const made = this.record.attempts[i] as number;
    if (made > this.#config.clients.maxRetries) {
      this.#where[i] = FAILED;
      this.#failed++;
      return;
    }
    const backoff = Math.min(BACKOFF_START_MS * 2 ** (made - 1), BACKOFF_MAX_MS);
    const delay = afterMs ?? backoff * (1 - 0.25 * this.#rng.next());
    this.#hooks.schedule(t + delay, { kind: "retry", i });
  }
}

/** counts[i] + 1, stored and returned. */
function bump(counts: Uint8Array, i: number): number {
  const n = (counts[i] ?? 0) + 1;
  counts[i] = n;
  return n;
}
