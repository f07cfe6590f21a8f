/**
 * The failover loop (docs/architecture.md, "One request", step 5): try the decided origin, then
 * the decision's alternates within the pool's retry budget, with backoff, only before the first
 * body byte. Every failed attempt moves the ticket with `reroute` at once, so the failed origin's
 * load and circuit change before the next attempt is made; the request's record learns each one.
 *
 * The first try may differ from the rest: a P/D decode leg carries the prefill's KV params or
 * the prefiller header (`leg`), or was sent already, beside its prefill leg (`result`). Every
 * later try is the client's request, served alone: `reroute` ends the prefill leg.
 */
import type { OriginSettings, PoolSettings } from "../../core/settings/settings-schema.ts";
import type { Routed } from "../coordination/shared/routed.ts";
import type { RequestRecord } from "../request-record/request-record.ts";
import { type AttemptRequest, type AttemptResult, attempt } from "./attempt.ts";
import type { Usage } from "./usage-scanner.ts";

export type Started = Extract<AttemptResult, { ok: true }>;
export type Failed = Extract<AttemptResult, { ok: false }>;

export interface ForwardInput {
  readonly env: Env;
  readonly ctx: Pick<ExecutionContext, "waitUntil">;
  readonly pool: PoolSettings;
  readonly routed: Routed;
  /** The client's request: its bytes go to the origin unless a P/D leg needs another body. */
  readonly request: Omit<AttemptRequest, "timeoutMs" | "body"> & { readonly body: ArrayBuffer };
  /** The parsed body, which P/D legs are built from (pd/leg-bodies.ts). */
  readonly json: Readonly<Record<string, unknown>>;
  readonly record: RequestRecord;
  /**
   * Told once the answer's body has ended whole, with what its usage scanner read (a Responses
   * answer's id: stored-responses/); not for a broken, stalled or abandoned one.
   */
  readonly answered?: ((answer: Answered) => void) | undefined;
  /**
   * Told the prompt tokens the engine counted once a 2xx answer's body has ended, whole or left
   * by its client (the engine prefilled the prompt either way), if it reported them; not for a
   * broken or stalled one. The key's budget is settled with it (access/token-budget.ts).
   */
  readonly counted?: ((promptTokens: number) => void) | undefined;
}

/** An answer that ended whole: who served it, its status, and its scanned usage. */
export interface Answered {
  readonly origin: string;
  readonly status: number;
  readonly usage: Usage;
}

/** What the first try sends instead of the client's request, or its result if already sent. */
export type FirstTry =
  | { readonly leg: Partial<Omit<AttemptRequest, "timeoutMs">>; readonly result?: undefined }
  | { readonly result: AttemptResult; readonly leg?: undefined };

export interface Served {
  readonly origin: string;
  readonly attempts: number;
  /** Prompt tokens the serving origin was believed to hold (after any failover). */
  readonly matchedTokens: number;
}

export type Tried =
  | { readonly ok: true; readonly started: Started; readonly served: Served; firstTry: boolean }
  | { readonly ok: false; readonly failures: readonly Failed[] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The decided origin and the alternates this isolate's settings know, within the budget. */
function candidates(input: ForwardInput): OriginSettings[] {
  const { decision } = input.routed;
  const origins = new Map(input.pool.origins.map((o) => [o.id, o]));
  // Alternates the isolate's settings do not know (the object may hold newer ones) are skipped.
  return [decision.origin, ...decision.alternates]
    .map((id) => (id === null ? undefined : origins.get(id)))
    .filter((o): o is OriginSettings => o !== undefined)
    .slice(0, input.pool.retry.maxAttempts);
}

export async function tryInTurn(input: ForwardInput, first: FirstTry | null): Promise<Tried> {
  const { pool, routed, record, ctx } = input;
  const { decision, ledger } = routed;
  const ticket = decision.ticket as string;
  const request = { ...input.request, timeoutMs: pool.firstByteTimeoutMs };
  const failures: Failed[] = [];
  let matchedTokens = record.matchedTokens;
  try {
    for (const [i, origin] of candidates(input).entries()) {
      if (i > 0) {
        const backoff = pool.retry.backoffMs * pool.retry.backoffMultiplier ** (i - 1);
        const [matched] = await Promise.all([
          ledger.reroute(ticket, failures[i - 1]!.failure, origin.id),
          sleep(backoff),
        ]);
        matchedTokens = matched ?? 0;
        record.rerouted();
      }
      record.origin = origin.id;
      record.attempts = i + 1;
      record.matchedTokens = matchedTokens;
      const firstTry = i === 0 ? first : null;
      const result: AttemptResult =
        firstTry?.result ?? (await attempt(input.env, origin, { ...request, ...firstTry?.leg }));
      if (result.ok) {
        const served = { origin: origin.id, attempts: i + 1, matchedTokens };
        return { ok: true, started: result, served, firstTry: i === 0 };
      }
      failures.push(result);
      record.failures.push({ origin: origin.id, kind: result.failure });
    }
  } catch (error) {
    // A misconfigured origin (its key secret unset): release the lease, then report the error.
    ctx.waitUntil(ledger.cancel(ticket));
    throw error;
  }
  return { ok: false, failures };
}
