/**
 * What a disaggregated request's legs can come to, the same for every protocol:
 * - the decode leg answers: its answer streams to the client, saying which origins served
 *   (`x-router-pd: remote`, `x-router-prefill-origin`);
 * - the prefill leg refuses the request (a 4xx): the client gets that answer, the decode leg
 *   is not tried (it would refuse it too);
 * - the prefill leg fails otherwise: the core's `prefillFailed` moves the request to its decode
 *   origin alone (`x-router-pd: prefill-failed`), which gets the client's own bytes;
 * - the decode leg fails before its first byte: failover (`reroute`, which ends the prefill
 *   leg) tries the alternates alone (`x-router-pd: decode-failed`).
 */
import type { FailureKind } from "../../core/router/router-types.ts";
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { type ForwardInput, type Started, type Tried, tryInTurn } from "../forward/failover.ts";
import { failAll, respond } from "../forward/respond.ts";

/**
 * Answer with the decode leg's outcome: `prefillOrigin` served too when the first try answered
 * (a later one was served alone). `settled`: a prefill leg still being read.
 */
export function answer(
  input: ForwardInput,
  tried: Tried,
  prefillOrigin: string,
  settled?: Promise<unknown>,
): Response {
  if (!tried.ok) failAll(input, tried.failures);
  return respond(tried.started, tried.served, input, {
    prefillOrigin: tried.firstTry ? prefillOrigin : null,
    settled,
  });
}

/** The prefill leg refused the request (4xx): its answer goes to the client. */
export function passRejection(
  input: ForwardInput,
  prefill: OriginSettings,
  rejected: Started,
  matchedTokens: number,
): Response {
  const { record } = input;
  record.origin = prefill.id;
  record.attempts = 1;
  const served = { origin: prefill.id, attempts: 1, matchedTokens };
  return respond(rejected, served, input, { prefillOrigin: prefill.id });
}

/** The prefill leg failed: the decode origin serves the client's request alone. */
export async function serveAlone(
  input: ForwardInput,
  prefill: OriginSettings,
  failure: FailureKind,
): Promise<Response> {
  const { record, routed } = input;
  record.failures.push({ origin: prefill.id, kind: failure });
  record.pd = "prefill-failed";
  record.prefill = null;
  const matched = await routed.ledger.prefillFailed(routed.decision.ticket as string, failure);
  if (matched !== null) record.matchedTokens = matched;
  const tried = await tryInTurn(input, null);
  if (!tried.ok) failAll(input, tried.failures);
  return respond(tried.started, tried.served, input);
}
