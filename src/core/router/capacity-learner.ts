/**
 * How many chunks the radix index lets each origin hold, learned from engine truth.
 *
 * Configured capacity comes from the engine's capacity report, else settings (the origin's,
 * else the pool's). Effective capacity is what the index enforces. An engine also keeps its
 * running requests in KV, so its prefix cache holds less than its KV size: when a completion
 * reports fewer cached tokens than the index predicted (by more than a chunk), effective
 * capacity shrinks by 5% (never below 10% of configured); a completion that confirms a
 * predicted match lets it grow back by the matched chunks, up to configured. A change of
 * configured capacity resets what was learned.
 *
 * It also sums the index's predictions against the engine's cached tokens (`accuracy`).
 * Every change of effective capacity goes to the index through `enforce`.
 */
import { asSlot, type Slot } from "../origin-indexes.ts";
import type { EngineUsage } from "./router-types.ts";

const SHRINK_ON_MISS = 0.95;
const MIN_CAPACITY_FRACTION = 0.1;

/** One origin's capacity as a snapshot keeps it. */
export interface LearnedCapacity {
  /** Capacity in tokens from an engine report, which overrides settings. */
  readonly reportedTokens: number | null;
  readonly configuredChunks: number;
  readonly effectiveChunks: number;
}

/** What the index predicted an origin held, to be checked against the engine's report. */
export interface Prediction {
  readonly matchedChunks: number;
  readonly matchedTokens: number;
}

interface OriginCapacity {
  settingsTokens: number;
  reportedTokens: number | null;
  configuredChunks: number;
  effectiveChunks: number;
}

export class CapacityLearner {
  readonly accuracy = { reports: 0, predictedTokens: 0, cachedTokens: 0, promptTokens: 0 };
  #bySlot: (OriginCapacity | undefined)[] = [];
  #tokensPerChunk: number;
  readonly #enforce: (slot: Slot, chunks: number) => void;

  constructor(tokensPerChunk: number, enforce: (slot: Slot, chunks: number) => void) {
    this.#tokensPerChunk = tokensPerChunk;
    this.#enforce = enforce;
  }

  /** A new index (another chunk size or budget): every capacity is to be enforced again. */
  reindex(tokensPerChunk: number): void {
    this.#tokensPerChunk = tokensPerChunk;
    for (const c of this.#bySlot) if (c) c.configuredChunks = 0;
  }

  /** The origin's capacity in settings, in tokens (a reported capacity overrides it). */
  configure(slot: Slot, settingsTokens: number): void {
    let c = this.#bySlot[slot];
    if (!c) {
      c = { settingsTokens, reportedTokens: null, configuredChunks: 0, effectiveChunks: 0 };
      this.#bySlot[slot] = c;
    }
    c.settingsTokens = settingsTokens;
    this.#reconfigure(slot, c);
  }

  /** The engine reported its KV capacity. */
  report(slot: Slot, tokens: number): void {
    const c = this.#at(slot);
    c.reportedTokens = tokens;
    this.#reconfigure(slot, c);
  }

  forget(slot: Slot): void {
    this.#bySlot[slot] = undefined;
  }

  effectiveChunks(slot: Slot): number {
    return this.#at(slot).effectiveChunks;
  }

  /**
   * A completion with the engine's cached tokens: count it, and correct the capacity unless the
   * index follows the engines' own events (`correct` false: their capacity is what they report).
   */
  learn(slot: Slot, predicted: Prediction, outcome: EngineUsage, correct = true): void {
    const cached = outcome.cachedTokens ?? 0;
    const a = this.accuracy;
    a.reports++;
    a.predictedTokens += predicted.matchedTokens;
    a.cachedTokens += cached;
    a.promptTokens += outcome.promptTokens ?? 0;
    if (!correct) return;
    const c = this.#at(slot);
    const configured = c.configuredChunks;
    if (cached + this.#tokensPerChunk < predicted.matchedTokens) {
      const floor = Math.ceil(configured * MIN_CAPACITY_FRACTION);
      this.#set(slot, c, Math.max(floor, Math.floor(c.effectiveChunks * SHRINK_ON_MISS)));
    } else if (predicted.matchedChunks > 0 && c.effectiveChunks < configured) {
      this.#set(slot, c, Math.min(configured, c.effectiveChunks + predicted.matchedChunks));
    }
  }

  /**
   * Take another learner's capacity for the origin (an edge replica adopting its coordinator's,
   * which learns from every isolate's completions): its engine report and what it learned,
   * never above the configured capacity.
   */
  adopt(slot: Slot, learned: LearnedCapacity): void {
    const c = this.#at(slot);
    if (learned.reportedTokens !== c.reportedTokens) {
      c.reportedTokens = learned.reportedTokens;
      this.#reconfigure(slot, c);
    }
    const chunks = Math.max(1, Math.min(c.configuredChunks, learned.effectiveChunks));
    if (chunks !== c.effectiveChunks) this.#set(slot, c, chunks);
  }

  saved(slot: Slot): LearnedCapacity {
    const { reportedTokens, configuredChunks, effectiveChunks } = this.#at(slot);
    return { reportedTokens, configuredChunks, effectiveChunks };
  }

  /**
   * Start again from a snapshot's capacities (replacing all), enforced at once; `configure`
   * then keeps what was learned unless settings or reports now give another size.
   */
  restore(saved: readonly (LearnedCapacity & { readonly slot: number })[]): void {
    this.#bySlot = [];
    for (const { slot, reportedTokens, configuredChunks, effectiveChunks } of saved) {
      const c = { settingsTokens: 0, reportedTokens, configuredChunks, effectiveChunks: 0 };
      this.#bySlot[slot] = c;
      const effective = Math.min(effectiveChunks || configuredChunks, configuredChunks);
      this.#set(asSlot(slot), c, effective);
    }
  }

  /** Test-only: throws unless each of `slots` has its capacity in force, within configured. */
  checkInvariants(slots: readonly Slot[], enforced: (slot: Slot) => number): void {
    for (const slot of slots) {
      const { configuredChunks, effectiveChunks } = this.#at(slot);
      if (enforced(slot) !== effectiveChunks)
        throw new Error(`capacity: slot ${slot}'s capacity not in force`);
      if (effectiveChunks > configuredChunks)
        throw new Error(`capacity: slot ${slot} over configured`);
    }
  }

  /** Recompute the configured capacity; a change resets what was learned. */
  #reconfigure(slot: Slot, c: OriginCapacity): void {
    const tokens = c.reportedTokens ?? c.settingsTokens;
    const chunks = Math.max(1, Math.floor(tokens / this.#tokensPerChunk));
    if (chunks === c.configuredChunks) return;
    c.configuredChunks = chunks;
    this.#set(slot, c, chunks);
  }

  #set(slot: Slot, c: OriginCapacity, chunks: number): void {
    c.effectiveChunks = chunks;
    this.#enforce(slot, chunks);
  }

  #at(slot: Slot): OriginCapacity {
    const c = this.#bySlot[slot];
    if (!c) throw new RangeError(`no capacity in slot ${slot}`);
    return c;
  }
}
