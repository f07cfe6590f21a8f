/**
 * Posts event batches to the router with retry and backoff. Load events only matter while they
 * are fresh, so a failed batch keeps just its state-changing events for the next attempt,
 * merged before the new batch: a cache-reset if it had one, and its last health and capacity
 * (core/engine-facts.ts; a later statement supersedes an earlier one, so however long the
 * router stays unreachable the carry stays this small). Nothing that changes the router's
 * picture of the engine is dropped, and nothing stale is resent.
 *
 * Each batch gets a unique `id` and the time it was made, `at` (ms, later than the last batch's
 * even within one millisecond), inside the signed body: the router applies a batch once and
 * never one older than the origin's last. "The last batch" is the last the router may have
 * applied or ordered (answered 2xx, 409, 5xx or not at all): one it refused outright (another
 * 4xx, e.g. a 400 for an `at` too far ahead of the router's clock) does not count, so a clock
 * that ran fast and was set back does not keep this reporter's `at` ahead, refused, until the
 * clock catches up. Retries of a batch resend the same body (the router answers 200
 * `duplicate: true` if an earlier attempt got through), while carried events go out in a new
 * batch. A 409 `stale_batch` (a newer batch of this origin was applied: another
 * reporter, or this reporter before a restart with its clock set back) is not retried; its
 * state-changing events are carried, and the next batch is made later than the applied one the
 * answer names (`error.details.lastAppliedAt`), so the reporter is not refused until its clock
 * passes it.
 */
import { randomUUID } from "node:crypto";
import type { EngineEvent } from "../../src/core/engine-events.ts";
import { changesIndex, factEvents, NO_FACTS, withEvents } from "../../src/core/engine-facts.ts";
import { SIGNATURE_HEADER, signatureHeader } from "../../src/core/webhook-signature.ts";

export interface DeliveryOptions {
  router: string;
  origin: string;
  secret: string;
  /** Attempts per batch before it waits for the next tick. */
  attempts: number;
  backoffMs: number;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type DeliveryResult = { ok: true } | { ok: false; status: number | null; message: string };

export class Delivery {
  #carry: EngineEvent[] = [];
  #lastAt = 0;
  readonly options: DeliveryOptions;

  constructor(options: DeliveryOptions) {
    this.options = options;
  }

  /** State-changing events waiting for a successful delivery. */
  get pending(): readonly EngineEvent[] {
    return this.#carry;
  }

  async send(events: readonly EngineEvent[]): Promise<DeliveryResult> {
    const batch = [...this.#carry, ...events];
    if (batch.length === 0) return { ok: true };
    const o = this.options;
    const doFetch = o.fetch ?? fetch;
    const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const now = o.now ?? Date.now;
    const at = Math.max(now(), this.#lastAt + 1);
    const body = JSON.stringify({ origin: o.origin, id: randomUUID(), at, events: batch });
    let last: DeliveryResult = { ok: false, status: null, message: "not sent" };
    for (let attempt = 0; attempt < o.attempts; attempt++) {
      if (attempt > 0) await sleep(o.backoffMs * 2 ** (attempt - 1));
      const t = Math.floor(now() / 1000);
      try {
        const response = await doFetch(new URL("/v1/engine/events", o.router), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            [SIGNATURE_HEADER]: await signatureHeader(o.secret, body, t),
          },
          body,
          signal: AbortSignal.timeout(o.timeoutMs),
        });
        if (response.ok) {
          await response.body?.cancel();
          this.#carry = [];
          this.#lastAt = at;
          return { ok: true };
        }
        const text = await response.text();
        last = { ok: false, status: response.status, message: text.slice(0, 300) };
        // A newer batch was applied: the next one is made after it, whatever this clock says.
        if (response.status === 409) this.#lastAt = Math.max(this.#lastAt, lastAppliedAt(text));
        // A 4xx other than 429 will not get better by retrying (bad secret, unknown origin,
        // a stale batch).
        if (response.status < 500 && response.status !== 429) break;
      } catch (error) {
        last = {
          ok: false,
          status: null,
          message: error instanceof Error ? error.message : String(error),
        };
      }
    }
    this.#carry = [
      ...batch.filter((e) => changesIndex([e])),
      ...factEvents(withEvents(NO_FACTS, batch)),
    ];
    if (!refused(last)) this.#lastAt = Math.max(this.#lastAt, at);
    return last;
  }
}

/** `error.details.lastAppliedAt` of a 409 `stale_batch` answer, else 0. */
function lastAppliedAt(text: string): number {
  try {
    const at = (JSON.parse(text) as { error?: { details?: { lastAppliedAt?: unknown } } }).error
      ?.details?.lastAppliedAt;
    return typeof at === "number" && Number.isSafeInteger(at) ? at : 0;
  } catch {
    return 0;
  }
}

/** The router refused the batch outright: it was not applied and orders nothing after it. */
function refused(result: DeliveryResult): boolean {
  if (result.ok || result.status === null) return false;
  return result.status >= 400 && result.status < 500 && result.status !== 409;
}
