/**
 * The P/D step of `route`, taken after the pool's policy chose the decode origin: it reads what
 * the decision needs off the router's parts (each eligible prefill origin's match of the prompt
 * just matched, queued prefill work and speed; the decode origin's role and match) and hands it
 * to `decideDisaggregation` (disaggregation.ts), which stays pure. Reads only; the router leases
 * what it decided (ticket-legs.ts). Also the views its failover reads (`servingAlone`).
 */
import { asPosition, type Slot } from "../origin-indexes.ts";
import type { OriginView } from "../policies/policy.ts";
import type { Rng } from "../rng.ts";
import type { RouteRequest } from "../route-request.ts";
import { type Disaggregation, decideDisaggregation } from "./disaggregation.ts";
import type { PrefillCandidate } from "./prefill-choice.ts";
import { prefillSpeed, type RouterParts } from "./router-parts.ts";

/** The P/D decision for a request whose decode origin is in `decodeSlot` (just matched). */
export function disaggregate(
  parts: RouterParts,
  request: RouteRequest,
  decodeSlot: Slot,
  rng: Rng,
  now: number,
): Disaggregation {
  const { pool, slots, board, claims } = parts;
  const { promptTokens } = request;
  const prefill: PrefillCandidate[] = [];
  for (const slot of slots.order) {
    if (slots.at(slot).settings.role !== "prefill") continue;
    const load = board.view(slot, now);
    if (!load.eligible) continue;
    prefill.push({
      slot,
      matchedTokens: claims.matchedTokens(slot, promptTokens),
      queuedPrefillTokens: load.queuedPrefillTokens,
      prefillTokensPerSecond: prefillSpeed(parts, slot),
    });
  }
  return decideDisaggregation({
    rule: pool.disaggregation,
    promptTokens,
    n: request.n ?? 1,
    decodeRole: slots.at(decodeSlot).settings.role,
    decodeMatchedTokens: claims.matchedTokens(decodeSlot, promptTokens),
    prefill,
    attentionTokens: pool.prefillAttentionTokens,
    rng,
  });
}

/**
 * The views failover reads: a prefill origin the policy was offered (to serve this request
 * whole) is no alternate, since `reroute` takes none; failover serves the client's bytes alone.
 * For pools with prefill or decode origins (others have no prefill origin to hide).
 */
export function servingAlone(
  parts: RouterParts,
  views: readonly OriginView[],
): readonly OriginView[] {
  const { slots } = parts;
  return views.map((view, i) =>
    view.eligible && slots.at(slots.slotAt(asPosition(i))).settings.role === "prefill"
      ? { ...view, eligible: false }
      : view,
  );
}
