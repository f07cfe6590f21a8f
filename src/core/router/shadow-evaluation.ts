/**
 * Shadow evaluation: "what would another policy have done on my traffic?" Each shadow policy is
 * asked on every request, with the very context the live policy saw, and only counted: how often
 * it agrees with the live choice, and how many prompt tokens its choice held in cache (the
 * prefix match it would have had). It never leases, inserts or reports, so live state is
 * untouched; each shadow has its own instance and random source, so asking it does not change
 * the live policy's draws either.
 *
 * The counterfactual is one step deep: the shadow sees the live policy's world (the index and
 * load the live decisions built), not the world its own decisions would have built. That is what
 * can be measured without running a second fleet; the simulator answers the full question.
 */
import { createPolicy, type PolicySettings } from "../policies/index.ts";
import type { Policy, PolicyContext } from "../policies/policy.ts";
import { createRng, type Rng } from "../rng.ts";

export interface ShadowStats {
  policy: string;
  decisions: number;
  /** Decisions that named the live policy's origin. */
  agreements: number;
  /** Prompt tokens the shadow's choices held, summed (the live sum is `liveMatchedTokens`). */
  matchedTokens: number;
  liveMatchedTokens: number;
  promptTokens: number;
}

interface Shadow {
  key: string;
  policy: Policy;
  rng: Rng;
  stats: ShadowStats;
}

export class ShadowEvaluation {
  #shadows: Shadow[] = [];

  /** Keep the counters of shadows whose settings did not change; start new ones at zero. */
  configure(settings: readonly PolicySettings[], seed: number): void {
    const old = new Map(this.#shadows.map((s) => [s.key, s]));
    this.#shadows = settings.map((policySettings, i) => {
      const key = JSON.stringify(policySettings);
      const kept = old.get(key);
      if (kept) return kept;
      const policy = createPolicy(policySettings);
      const stats = {
        policy: policy.name,
        decisions: 0,
        agreements: 0,
        matchedTokens: 0,
        liveMatchedTokens: 0,
        promptTokens: 0,
      };
      return { key, policy, rng: createRng(seed + 7919 * (i + 1)), stats };
    });
  }

  get size(): number {
    return this.#shadows.length;
  }

  /** Ask every shadow about the request the live policy just decided (`chosen`: its index). */
  observe(context: PolicyContext, chosen: number): void {
    const live = chosen < 0 ? 0 : (context.matchedTokens[chosen] ?? 0);
    for (const shadow of this.#shadows) {
      const decision = shadow.policy.decide({ ...context, rng: shadow.rng });
      const s = shadow.stats;
      s.decisions++;
      if (decision.origin === chosen) s.agreements++;
      s.matchedTokens += decision.origin < 0 ? 0 : (context.matchedTokens[decision.origin] ?? 0);
      s.liveMatchedTokens += live;
      s.promptTokens += context.request.promptTokens;
    }
  }

  stats(): ShadowStats[] {
    return this.#shadows.map((s) => ({ ...s.stats }));
  }
}
