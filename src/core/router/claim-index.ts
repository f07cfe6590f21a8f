/**
 * The radix index as the router uses it, by slot: how much of a prompt each origin holds (one
 * `match` per prompt, then read per slot, in tokens), claims (route records at once that the
 * chosen origin will hold the whole prompt once it has prefilled it, as SGLang's tree and
 * Dynamo's approximate mode do) and taking a claim back (the origin never prefilled: truncate
 * to what it held before). The raw per-slot match buffer stays in here, read only through
 * methods that take a `Slot`. One is made per chunk size, index budget and feed, or from a
 * snapshot. Fed by engine events (index-feed.ts), claims are no-ops and kv events fill it.
 */
import type { KvEvent } from "../engine-events.ts";
import type { Slot } from "../origin-indexes.ts";
import { RadixIndex, type RadixIndexStats } from "../radix-index/radix-index.ts";
import { applyKvEvent, claimsOnRoute, type IndexFeed } from "./index-feed.ts";

/** Slots of the index (the settings allow as many origins). */
const MAX_ORIGINS = 256;

/**
 * What a ticket's origin is claimed to hold (all of `hashes`) and what it held before
 * (`matchedChunks`, the index's prediction of its cache hit).
 */
export interface Claim {
  readonly hashes: ArrayLike<number>;
  readonly slot: Slot;
  readonly matchedChunks: number;
  readonly matchedTokens: number;
}

export class ClaimIndex {
  readonly #index: RadixIndex;
  #tokensPerChunk: number;
  readonly feed: IndexFeed;
  /** False: `unclaim` does nothing (an edge replica's index: core-router.ts says why). */
  unclaims = true;
  /** By slot: leading chunks of the last matched prompt each origin holds. */
  readonly #matched = new Int32Array(MAX_ORIGINS);

  constructor(tokensPerChunk: number, maxChunks: number, feed: IndexFeed, snapshot?: Uint8Array) {
    this.#tokensPerChunk = tokensPerChunk;
    this.feed = feed;
    this.#index = snapshot
      ? RadixIndex.restore(snapshot, { maxChunks })
      : new RadixIndex({ maxOrigins: MAX_ORIGINS, maxChunks });
  }

  /** Tokens per chunk changed (the pool's learned bytes per token: bytes-per-token.ts). */
  retoken(tokensPerChunk: number): void {
    this.#tokensPerChunk = tokensPerChunk;
  }

  /**
   * Match a prompt: `matchedTokens` and `claim` then answer for it. Returns the chunks of it
   * the deepest holder holds.
   */
  match(hashes: ArrayLike<number>): number {
    return this.#index.match(hashes, this.#matched);
  }

  /** Prompt tokens the origin in `slot` holds of the last matched prompt. */
  matchedTokens(slot: Slot, promptTokens: number): number {
    return Math.min((this.#matched[slot] as number) * this.#tokensPerChunk, promptTokens);
  }

  /** Claim the last matched prompt (`hashes`) for the origin in `slot`. */
  claim(hashes: ArrayLike<number>, slot: Slot, promptTokens: number, now: number): Claim {
    const matchedChunks = this.#matched[slot] as number;
    const matchedTokens = this.matchedTokens(slot, promptTokens);
    if (claimsOnRoute(this.feed)) this.#index.insert(hashes, slot, now);
    return { hashes, slot, matchedChunks, matchedTokens };
  }

  /** The origin never prefilled the prompt: take back what was claimed for it. */
  unclaim(claim: Claim): void {
    if (!claimsOnRoute(this.feed) || !this.unclaims) return;
    this.#index.truncate(claim.hashes, claim.slot, claim.matchedChunks);
  }

  /**
   * Another router claimed a prompt for the origin in `slot` (an edge replica applying its
   * coordinator's delta): the prompt is the path to the chunk named `parent` (none: from the
   * root) followed by `run`. False when no origin here holds `parent`: the path is unknown.
   * `warm`: a request went through it that this index has not counted (not a drop's restored
   * path, nor the copy of a claim this router made itself: radix-index/heat.ts).
   */
  claimRun(
    slot: Slot,
    parent: number | null,
    run: readonly number[],
    warm: boolean,
    now: number,
  ): boolean {
    const path = parent === null ? [] : this.#index.pathOf(parent);
    if (path === null) return false;
    for (const hash of run) path.push(hash);
    if (path.length > 0) this.#index.insert(path, slot, now, warm);
    return true;
  }

  /** The origin in `slot` no longer holds the chunk named `hash` nor what it holds below it. */
  dropFrom(slot: Slot, hash: number): void {
    this.#index.dropFrom(hash, slot);
  }

  /** The chained hashes of the prefix the chunk named `hash` closes, or null if none is held. */
  pathOf(hash: number): number[] | null {
    return this.#index.pathOf(hash);
  }

  /** An engine's kv event for the origin in `slot` (ignored unless fed by engine events). */
  applyKvEvent(slot: Slot, event: KvEvent, now: number): boolean {
    return applyKvEvent(this.#index, this.feed, slot, event, now);
  }

  /** Leading prompt tokens on prefixes at least `minHeat` requests went through lately. */
  hotTokens(hashes: ArrayLike<number>, promptTokens: number, now: number, minHeat: number): number {
    return Math.min(
      promptTokens,
      this.#index.hotDepth(hashes, now, minHeat) * this.#tokensPerChunk,
    );
  }

  /**
   * Leading prompt tokens different prompts share: up to the deepest hot node where prompts
   * branch (RadixIndex.sharedDepth), e.g. a system prompt under many conversations.
   */
  sharedTokens(
    hashes: ArrayLike<number>,
    promptTokens: number,
    now: number,
    minHeat: number,
  ): number {
    return Math.min(
      promptTokens,
      this.#index.sharedDepth(hashes, now, minHeat) * this.#tokensPerChunk,
    );
  }

  /** Those of `slots` that hold the first `depth` chunks of `hashes`. */
  holders(hashes: ArrayLike<number>, depth: number, slots: readonly Slot[]): Slot[] {
    this.#index.match(hashes, this.#matched);
    return slots.filter((slot) => (this.#matched[slot] as number) >= depth);
  }

  setCapacity(slot: Slot, chunks: number): void {
    this.#index.setCapacity(slot, chunks);
  }

  /** The origin's cache is gone (it left, or its engine reset): it holds nothing. */
  forget(slot: Slot): void {
    this.#index.removeOrigin(slot);
  }

  ownedChunks(slot: Slot): number {
    return this.#index.owned(slot);
  }

  stats(): RadixIndexStats {
    return this.#index.stats();
  }

  snapshot(): Uint8Array {
    return this.#index.snapshot();
  }

  capacityChunks(slot: Slot): number {
    return this.#index.capacity(slot);
  }

  /** Test-only: throws if the index's structural invariants are broken. */
  checkInvariants(): void {
    this.#index.checkInvariants();
  }
}
