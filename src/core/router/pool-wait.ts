/**
 * How long a new request would wait at the pool's best origin before its prefill starts: the
 * signal admission gates on (src/core/admission). Pure, over the same origin views the policy
 * decides on (policy-context.ts), so admission and routing judge the same load.
 *
 * For an origin o with prefill speed S_o (tokens/s), the router's fluid estimate Q_o of the
 * prefill work queued there (load-board.ts: attention-weighted tokens, corrected by successes
 * and by the engine's reports of its own waiting requests), K_o the prompt tokens of the
 * requests it has in flight, and an engine report of w_o waiting requests with freshness f_o:
 *   wait_o = (Q_o + d * K_o + f_o * max(0, w_o - outstanding_o) * meanWork) / S_o
 * The middle term is `cost`'s decode term (policies/cost.ts, d = its default decodeWeight):
 * requests in flight share every iteration with a new prefill, so a full batch prefills
 * slower than S_o. Without it admission let the pool run past its capacity (conversation at
 * 8 origins, load 1.5: 8.4 requests/s admitted against 7.7 of capacity, admitted p90 TTFT
 * 5.3 s; with it 7.9 and 1.9 s; bench/sim/README.md, "Overload").
 * The last term is what the engine says waits there beyond everything this router sent
 * (another router's or a direct client's requests), each costed at `meanWork`, the caller's
 * estimate of one request's prefill work. An origin with nothing of ours in flight and nothing
 * foreign waiting has wait 0 whatever the estimate says: a request is never held while an
 * origin idles (the estimate can only be wrong high there, e.g. a prefill speed set too low).
 * The pool's wait is the least over the origins a request can be sent to (eligible, not
 * prefill-only); 0 when there is none, so `route` answers `no-eligible-origin` at once rather
 * than a request waiting for an origin to come back.
 */
import { DEFAULT_DECODE_WEIGHT } from "../policies/cost.ts";
import type { OriginView } from "../policies/policy.ts";

export function originWaitMs(view: OriginView, meanWork: number): number {
  const engine = view.engine;
  const foreign = engine ? engine.freshness * Math.max(0, engine.waiting - view.outstanding) : 0;
  if (view.outstanding === 0 && foreign === 0) return 0;
  const work =
    view.queuedPrefillTokens + DEFAULT_DECODE_WEIGHT * view.activeTokens + foreign * meanWork;
  return (work / view.prefillTokensPerSecond) * 1000;
}

/** The least wait over the origins a request can be sent to; 0 when none is eligible. */
export function poolWaitMs(views: readonly OriginView[], meanWork: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (const view of views) if (view.eligible) best = Math.min(best, originWaitMs(view, meanWork));
  return best === Number.POSITIVE_INFINITY ? 0 : best;
}
