/**
 * The pool's policy: the live one and its shadows, with the seeded random source they draw
 * from. A policy keeps its instance (and so its state, e.g. round-robin's cursor) while its
 * settings stay the same; shadows keep their counters likewise (shadow-evaluation.ts). Every
 * shadow sees the very context the live policy decided on.
 */
import { createPolicy, type PolicySettings } from "../policies/index.ts";
import type { Decision, Policy, PolicyContext } from "../policies/policy.ts";
import { createRng, type Rng } from "../rng.ts";
import { ShadowEvaluation, type ShadowStats } from "./shadow-evaluation.ts";

export class PoolPolicy {
  /**
   * The live policy's random source (tie-breaks, random, power-of-two): one stream from the
   * router's seed, or restarted per decision by `reseed` (edge replicas).
   */
  readonly rng: Rng = {
    next: () => this.#rng.next(),
    int: (n: number) => this.#rng.int(n),
  };
  #rng: Rng;
  readonly #seed: number;
  #live!: Policy;
  #liveKey = "";
  readonly #shadows = new ShadowEvaluation();

  constructor(seed: number) {
    this.#seed = seed;
    this.#rng = createRng(seed);
  }

  /** The next decision draws from a stream of its own, seeded by `seed`. */
  reseed(seed: number): void {
    this.#rng = createRng(seed);
  }

  get name(): string {
    return this.#live.name;
  }

  configure(live: PolicySettings, shadows: readonly PolicySettings[]): void {
    this.#shadows.configure(shadows, this.#seed);
    const key = JSON.stringify(live);
    if (key === this.#liveKey) return;
    this.#live = createPolicy(live);
    this.#liveKey = key;
  }

  /** The live policy's decision; `context.rng` is to be `this.rng`. */
  decide(context: PolicyContext): Decision {
    const decision = this.#live.decide(context);
    if (this.#shadows.size > 0) this.#shadows.observe(context, decision.origin);
    return decision;
  }

  shadowStats(): ShadowStats[] {
    return this.#shadows.stats();
  }
}
