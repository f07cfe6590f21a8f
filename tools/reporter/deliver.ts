/**
 * Posts event batches to the router with retry and backoff. Load events only matter while they
 * are fresh, so a failed batch keeps just its state-changing events (capacity, cache-reset,
 * health) for the next attempt, merged before the new batch; nothing that changes the router's
 * picture of the engine is dropped, and nothing stale is resent.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";
import { SIGNATURE_HEADER, signatureHeader } from "./sign.ts";

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
    const body = JSON.stringify({ origin: o.origin, events: batch });
    let last: DeliveryResult = { ok: false, status: null, message: "not sent" };
    for (let attempt = 0; attempt < o.attempts; attempt++) {
      if (attempt > 0) await sleep(o.backoffMs * 2 ** (attempt - 1));
      const t = Math.floor((o.now ?? Date.now)() / 1000);
      try {
        const response = await doFetch(new URL("/v1/engine/events", o.router), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            [SIGNATURE_HEADER]: signatureHeader(o.secret, body, t),
          },
          body,
          signal: AbortSignal.timeout(o.timeoutMs),
        });
        if (response.ok) {
          await response.body?.cancel();
          this.#carry = [];
          return { ok: true };
        }
        last = {
          ok: false,
          status: response.status,
          message: (await response.text()).slice(0, 300),
        };
        // A 4xx other than 429 will not get better by retrying (bad secret, unknown origin).
        if (response.status < 500 && response.status !== 429) break;
      } catch (error) {
        last = {
          ok: false,
          status: null,
          message: error instanceof Error ? error.message : String(error),
        };
      }
    }
    this.#carry = batch.filter((e) => e.type !== "load");
    return last;
  }
}
