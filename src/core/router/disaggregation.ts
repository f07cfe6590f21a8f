/**
 * Whether a request in a pool with prefill origins is prefilled remotely, after the pool's
 * policy has chosen its decode origin (llm-d's disagg profile handler and Dynamo's
 * PrefillRouter both decide in this order: the decode origin holds the conversation, so it is
 * chosen for its cache and load; the prefill origin is a helper). In order, first match wins:
 *
 * 1. `pd:n>1`: the request asks for several choices; upstream P/D routers do not relay those.
 * 2. `pd:whole-on-prefill`: the policy chose a prefill origin, which serves the request whole.
 *    It may only where the pool lets prefill origins serve whole (`prefillServesWhole`) and
 *    `wholeOnPrefill` below lets this one: it has no prefill queued (remote prefills come
 *    first) and the rule would keep the request local there, as on a decode origin holding
 *    what it holds. So the policy weighs an idle prefill origin beside the decode origins for
 *    the requests no origin would prefill remotely; a long uncached prompt never lands there
 *    whole. Longer queues allowed measured worse (bench/sim/README.md).
 * 3. `pd:aggregated-origin`: the policy chose a `both` origin, which takes no KV from others.
 * 4. `pd:local-cached`: the decode origin's own prefill is small: fewer than
 *    `minUncachedTokens` uncached tokens there and at most `maxUncachedFraction` of the prompt
 *    (Dynamo's IslBoundingPolicy, lib/kv-router/src/conditional_disagg.rs, which bypasses when
 *    uncached < 2048 and uncached / prompt < 0.7). A prefill that short barely stalls the
 *    origin's decodes, and a remote one would copy KV the origin mostly holds.
 * 5. `pd:no-prefill-origin`: no prefill origin is eligible (down, draining, circuit open).
 * 6. `pd:prefill-busy`: the best prefill origin (prefill-choice.ts) has more than
 *    `prefillBusyMs` of work queued: the decode origin prefills instead of waiting (Dynamo's
 *    PrefillLoadPolicy, whose line is active prefill tokens over 4 x max_num_batched_tokens,
 *    about 1.3 s of an H100's prefill of Llama-3.1-8B; the default 100 ms was measured better,
 *    bench/sim/README.md).
 * 7. `pd:remote`: the prefill origin prefills, the decode origin takes its KV.
 *
 * Pure: the router hands in what it read of the index and the load board.
 */
import type { Rng } from "../rng.ts";
import type { DisaggregationSettings, OriginRole } from "../settings/pd-settings.ts";
import { choosePrefill, type PrefillCandidate } from "./prefill-choice.ts";

export const PD_REASONS = [
  "pd:remote",
  "pd:local-cached",
  "pd:prefill-busy",
  "pd:no-prefill-origin",
  "pd:aggregated-origin",
  "pd:whole-on-prefill",
  "pd:n>1",
] as const;
export type PdReason = (typeof PD_REASONS)[number];

export interface DisaggregationInput {
  readonly rule: DisaggregationSettings;
  readonly promptTokens: number;
  /** Choices the request asks for (OpenAI's `n`). */
  readonly n: number;
  /** The chosen origin's role (a decode origin, unless rule 2 or 3) and the prompt it holds. */
  readonly decodeRole: OriginRole;
  readonly decodeMatchedTokens: number;
  /** The eligible prefill origins. */
  readonly prefill: readonly PrefillCandidate[];
  readonly attentionTokens: number;
  readonly rng: Rng;
}

export type Disaggregation =
  | { readonly reason: "pd:remote"; readonly prefill: PrefillCandidate }
  | { readonly reason: Exclude<PdReason, "pd:remote">; readonly prefill: null };

/** True when the decode origin's own prefill is small enough to keep (rule 3). */
export function smallUncached(
  rule: DisaggregationSettings,
  promptTokens: number,
  decodeMatchedTokens: number,
): boolean {
  const uncached = Math.max(0, promptTokens - decodeMatchedTokens);
  return (
    uncached < rule.minUncachedTokens &&
    uncached <= rule.maxUncachedFraction * Math.max(1, promptTokens)
  );
}

/**
 * True when a prefill origin may take the request whole (rule 2): it has no prefill queued
 * (the router's estimate; remote prefills come first) and the request's uncached part there is
 * small (rule 4's test, with its own match).
 */
export function wholeOnPrefill(
  rule: DisaggregationSettings,
  promptTokens: number,
  matchedTokens: number,
  queuedPrefillTokens: number,
): boolean {
  return queuedPrefillTokens <= 0 && smallUncached(rule, promptTokens, matchedTokens);
}

export function decideDisaggregation(input: DisaggregationInput): Disaggregation {
  const local = (reason: Exclude<PdReason, "pd:remote">): Disaggregation => ({
    reason,
    prefill: null,
  });
  if (input.n > 1) return local("pd:n>1");
  if (input.decodeRole === "prefill") return local("pd:whole-on-prefill");
  if (input.decodeRole !== "decode") return local("pd:aggregated-origin");
  if (smallUncached(input.rule, input.promptTokens, input.decodeMatchedTokens))
    return local("pd:local-cached");
  const choice = choosePrefill(input.prefill, input.promptTokens, input.attentionTokens, input.rng);
  if (choice === null) return local("pd:no-prefill-origin");
  if (choice.queueMs > input.rule.prefillBusyMs) return local("pd:prefill-busy");
  return { reason: "pd:remote", prefill: choice.candidate };
}
