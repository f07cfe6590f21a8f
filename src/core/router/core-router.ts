/**
 * The core router of one pool: the radix index, the load board and the pool's policy tied
 * together. It is the whole routing brain; the Durable Object only holds one and persists its
 * snapshot, the Worker's fallback holds one with `prefix-hash`, and the simulator drives one
 * directly. It never reads the clock (`now` is passed in, milliseconds) or a global random source.
 *
 * Its parts live beside it: origin ids to slots and the settings order (origin-slots.ts) and
 * capacity learned from engine reports (capacity-learner.ts).
 *
 * route:    match the hashes, let the policy decide over the load board's view, then lease the
 *           request to the origin and claim in the index that the origin will hold the prompt
 *           once it has prefilled it (as SGLang's tree and Dynamo's approximate mode do), so the
 *           next request with this prefix sees it at once.
 * reroute:  the origin failed before its first byte; take back the claim, count the failure,
 *           lease to the alternate tried next and claim there.
 * cancel:   the ticket will not be used: release it as if never routed.
 * complete: release the lease; a failure before the first byte takes back the claim; engine
 *           truth (cached tokens) corrects the origin's capacity.
 * ingest:   engine events: load, capacity, cache reset, health.
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { EngineEvent } from "../engine-events.ts";
import { LoadBoard } from "../load-board/load-board.ts";
import { asPosition, type Position, type Slot } from "../origin-indexes.ts";
import { createPolicy } from "../policies/index.ts";
import type { OriginView, Policy, PolicyContext } from "../policies/policy.ts";
import { prefillWork } from "../prefill-work.ts";
import { RadixIndex } from "../radix-index/radix-index.ts";
import { createRng, type Rng } from "../rng.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { CapacityLearner } from "./capacity-learner.ts";
import { DecisionLog } from "./decision-log.ts";
import { HotPrefixes } from "./hot-prefixes.ts";
import { OriginSlots } from "./origin-slots.ts";
import { decodeSnapshot, encodeSnapshot } from "./router-snapshot.ts";
import type {
  FailureKind,
  HotPrefixStats,
  OriginStats,
  Outcome,
  RouteDecision,
  RouteRequest,
  RouterStats,
} from "./router-types.ts";
import { ShadowEvaluation } from "./shadow-evaluation.ts";

/** Slots of the index (the settings allow as many origins). */
const MAX_ORIGINS = 256;
/** Hot prefixes listed by `stats`. */
const HOT_PREFIXES_SHOWN = 10;

export interface CoreRouterOptions {
  model: string;
  /** Seed of the policy's random source (tie-breaks, random, power-of-two). */
  seed?: number;
  /** Makes tickets unique across restarts of the holder (e.g. a random id per object start). */
  ticketPrefix?: string;
}

/**
 * What a ticket's origin is claimed to hold once it prefills the prompt (the whole prompt, in
 * the index at once), and what it held before: a failure before its first byte truncates the
 * claim back to `matchedChunks`.
 */
interface Claim {
  readonly hashes: ArrayLike<number>;
  readonly slot: Slot;
  readonly matchedChunks: number;
  readonly matchedTokens: number;
}

export class CoreRouter {
  readonly model: string;
  #pool!: PoolSettings;
  #policy!: Policy;
  #policyKey = "";
  readonly #rng: Rng;
  readonly #seed: number;
  readonly #shadows = new ShadowEvaluation();
  readonly #hot = new HotPrefixes();
  #index!: RadixIndex;
  #board: LoadBoard;
  readonly #slots = new OriginSlots();
  readonly #capacity: CapacityLearner;
  /** Live tickets: routed, and not yet completed, cancelled, expired or gone with their origin. */
  readonly #tickets = new Map<string, Claim>();
  readonly #ticketPrefix: string;
  #issued = 0;
  readonly #log = new DecisionLog();
  readonly #failures: Partial<Record<FailureKind, number>> = {};
  /** By slot: leading chunks of the last matched prompt each origin holds. */
  readonly #matched = new Int32Array(MAX_ORIGINS);

  constructor(pool: PoolSettings, options: CoreRouterOptions) {
    this.model = options.model;
    this.#seed = options.seed ?? 1;
    this.#rng = createRng(this.#seed);
    this.#ticketPrefix = options.ticketPrefix ?? "t";
    this.#board = new LoadBoard(boardOptions(pool));
    this.#capacity = new CapacityLearner(tokensPerChunk(pool), (slot, chunks) =>
      this.#index.setCapacity(slot, chunks),
    );
    this.applySettings(pool);
  }

  get tokensPerChunk(): number {
    return tokensPerChunk(this.#pool);
  }

  get policyName(): string {
    return this.#policy.name;
  }

  /** Take new pool settings; state of origins that stay is kept. Settings arrive validated. */
  applySettings(pool: PoolSettings): void {
    const old = this.#pool as PoolSettings | undefined;
    this.#pool = pool;
    this.#board.options = boardOptions(pool);
    if (old?.chunkBytes !== pool.chunkBytes || old.indexMaxChunks !== pool.indexMaxChunks) {
      // Hashes of another chunk size name other prefixes: the old index is meaningless.
      this.#index = new RadixIndex({ maxOrigins: MAX_ORIGINS, maxChunks: pool.indexMaxChunks });
      this.#hot.clear();
      this.#capacity.reindex(this.tokensPerChunk);
    }
    this.#shadows.configure(pool.shadowPolicies, this.#seed);
    const policyKey = JSON.stringify(pool.policy);
    if (policyKey !== this.#policyKey) {
      this.#policy = createPolicy(pool.policy);
      this.#policyKey = policyKey;
    }
    for (const slot of this.#slots.sync(pool.origins)) this.#clear(slot);
    this.#configureOrigins();
  }

  /** Each origin's prefill speed and capacity from settings (a no-op where nothing changed). */
  #configureOrigins(): void {
    const pool = this.#pool;
    for (const slot of this.#slots.order) {
      const { settings } = this.#slots.at(slot);
      this.#board.ensure(slot, settings.prefillTokensPerSecond ?? pool.prefillTokensPerSecond);
      this.#capacity.configure(slot, settings.kvCapacityTokens ?? pool.kvCapacityTokens);
    }
  }

  /**
   * The origin in `slot` left: forget what is filed under the slot before another takes it.
   * Its tickets go with its leases, or their completions would land on the slot's next origin.
   */
  #clear(slot: Slot): void {
    this.#index.removeOrigin(slot);
    this.#board.remove(slot);
    this.#capacity.forget(slot);
    for (const [ticket, claim] of this.#tickets) {
      if (claim.slot === slot) this.#tickets.delete(ticket);
    }
  }

  route(request: RouteRequest, now: number): RouteDecision {
    this.expire(now);
    const { chunkHashes: hashes, promptTokens } = request;
    this.#index.match(hashes, this.#matched);
    this.#hot.observe(hashes, now);
    const context = this.#context(request, now);
    const decision = this.#policy.decide(context);
    if (this.#shadows.size > 0) this.#shadows.observe(context, decision.origin);
    const { reason } = decision;
    const policy = this.#policy.name;
    if (decision.origin < 0) {
      this.#log.record({ at: now, origin: null, reason, matchedTokens: 0, promptTokens });
      return { origin: null, alternates: [], matchedTokens: 0, policy, reason, ticket: null };
    }
    // A policy's decision indexes its context's origins: a position in the settings order.
    const chosen = asPosition(decision.origin);
    const ticket = `${this.#ticketPrefix}${(this.#issued++).toString(36)}`;
    const { matchedTokens } = this.#lease(
      ticket,
      hashes,
      this.#slots.slotAt(chosen),
      promptTokens,
      now,
    );
    const origin = (context.origins[chosen] as OriginView).id;
    this.#log.record({ at: now, origin, reason, matchedTokens, promptTokens });
    const alternates = this.#alternates(context.origins, chosen, decision.ranking);
    return { origin, alternates, matchedTokens, policy, reason, ticket };
  }

  /** What the policy sees: the origins in settings order (by position), matches and load. */
  #context(request: RouteRequest, now: number): PolicyContext {
    const order = this.#slots.order;
    const tokensPerChunk = this.tokensPerChunk;
    return {
      request,
      origins: order.map((slot) => this.#view(slot, now)),
      matchedTokens: order.map((slot) => this.#matchedTokens(slot, request.promptTokens)),
      tokensPerChunk,
      attentionTokens: this.#pool.prefillAttentionTokens,
      hotTokens: (minHeat: number) =>
        Math.min(
          request.promptTokens,
          this.#index.hotDepth(request.chunkHashes, now, minHeat) * tokensPerChunk,
        ),
      now,
      rng: this.#rng,
    };
  }

  #view(slot: Slot, now: number): OriginView {
    const { settings } = this.#slots.at(slot);
    const v = this.#board.view(slot, now);
    return {
      id: settings.id,
      eligible: v.eligible,
      outstanding: v.outstanding,
      queuedPrefillTokens: v.queuedPrefillTokens,
      activeTokens: v.activeTokens,
      engine: v.engine,
      prefillTokensPerSecond: settings.prefillTokensPerSecond ?? this.#pool.prefillTokensPerSecond,
      weight: settings.weight,
    };
  }

  /** Prompt tokens the origin in `slot` holds, by the last `match`. */
  #matchedTokens(slot: Slot, promptTokens: number): number {
    return Math.min((this.#matched[slot] as number) * this.tokensPerChunk, promptTokens);
  }

  /** Count the request against the origin and claim the prompt for it (`#matched` is fresh). */
  #lease(
    ticket: string,
    hashes: ArrayLike<number>,
    slot: Slot,
    promptTokens: number,
    now: number,
  ): Claim {
    const matchedChunks = this.#matched[slot] as number;
    const matchedTokens = this.#matchedTokens(slot, promptTokens);
    const work = prefillWork(matchedTokens, promptTokens, this.#pool.prefillAttentionTokens);
    this.#board.lease(ticket, slot, promptTokens, work, now);
    this.#index.insert(hashes, slot, now);
    this.#slots.at(slot).routed++;
    const claim = { hashes, slot, matchedChunks, matchedTokens };
    this.#tickets.set(ticket, claim);
    return claim;
  }

  /** The origin never prefilled the prompt: take back what was claimed for it. */
  #unclaim(claim: Claim): void {
    this.#index.truncate(claim.hashes, claim.slot, claim.matchedChunks);
  }

  /**
   * Failover order, as many as the retry budget can use: the policy's ranking, then the other
   * eligible origins with the fewest requests in flight.
   */
  #alternates(
    origins: readonly OriginView[],
    chosen: Position,
    ranking: readonly number[] | undefined,
  ): string[] {
    const budget = this.#pool.retry.maxAttempts - 1;
    const out: string[] = [];
    const taken = new Set<number>([chosen]);
    const take = (i: number) => {
      taken.add(i);
      out.push((origins[i] as OriginView).id);
    };
    for (const i of ranking ?? []) {
      if (out.length >= budget) return out;
      if (!taken.has(i) && origins[i]?.eligible) take(i);
    }
    while (out.length < budget) {
      let best = -1;
      for (let i = 0; i < origins.length; i++) {
        const o = origins[i] as OriginView;
        if (taken.has(i) || !o.eligible) continue;
        if (best < 0 || o.outstanding < (origins[best] as OriginView).outstanding) best = i;
      }
      if (best < 0) break;
      take(best);
    }
    return out;
  }

  /**
   * The ticket's origin failed before its first byte; `next` will be tried instead. Returns the
   * prompt tokens `next` is believed to hold, or null for an unknown ticket or origin.
   */
  reroute(ticket: string, failure: FailureKind, next: string, now: number): number | null {
    const claim = this.#tickets.get(ticket);
    const nextSlot = this.#slots.slotOf(next);
    if (!claim || nextSlot === undefined) return null;
    const promptTokens = this.#board.release(ticket, false, now)?.promptTokens ?? 0;
    this.#unclaim(claim);
    this.#onFailure(claim.slot, failure, now);
    this.#index.match(claim.hashes, this.#matched);
    return this.#lease(ticket, claim.hashes, nextSlot, promptTokens, now).matchedTokens;
  }

  /**
   * The ticket will not be used (e.g. a decision that arrived after the Worker stopped waiting):
   * release it as if it had never been routed, blaming no origin. False for an unknown ticket.
   */
  cancel(ticket: string, now: number): boolean {
    const claim = this.#tickets.get(ticket);
    if (!claim) return false;
    this.#tickets.delete(ticket);
    this.#board.release(ticket, false, now);
    this.#board.onAbandon(claim.slot);
    this.#unclaim(claim);
    return true;
  }

  /** The request ended. Returns false for an unknown (expired or foreign) ticket. */
  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const claim = this.#tickets.get(ticket);
    if (!claim) return false;
    this.#tickets.delete(ticket);
    const beforeFirstByte =
      !outcome.ok && outcome.failure !== undefined && outcome.failure !== "stream";
    this.#board.release(ticket, !beforeFirstByte, now);
    if (beforeFirstByte) this.#unclaim(claim);
    if (outcome.failure !== undefined) this.#onFailure(claim.slot, outcome.failure, now);
    if (outcome.ok) {
      this.#board.onSuccess(claim.slot);
      if (outcome.cachedTokens !== undefined) this.#capacity.learn(claim.slot, claim, outcome);
    } else if (outcome.failure === undefined) {
      // Neither success nor the origin's fault (client left, 4xx): a half-open probe that ends
      // this way proves nothing, so the next request may probe.
      this.#board.onAbandon(claim.slot);
    }
    return true;
  }

  #onFailure(slot: Slot, kind: FailureKind, now: number): void {
    this.#failures[kind] = (this.#failures[kind] ?? 0) + 1;
    this.#board.onFailure(slot, now);
  }

  /** Apply a batch of engine events for one origin. False if the origin is unknown. */
  ingest(originId: string, events: readonly EngineEvent[], now: number): boolean {
    const slot = this.#slots.slotOf(originId);
    if (slot === undefined) return false;
    for (const event of events) {
      switch (event.type) {
        case "load":
          this.#board.report(slot, event, now);
          break;
        case "capacity":
          this.#capacity.report(slot, event.kvCapacityTokens);
          break;
        case "cache-reset":
          this.#index.removeOrigin(slot);
          break;
        case "health":
          this.#board.setHealth(slot, event.status);
          break;
        default: {
          const unknown: never = event;
          throw new Error(`unknown event ${JSON.stringify(unknown)}`);
        }
      }
    }
    return true;
  }

  /** Requests routed and not yet completed, cancelled or expired. */
  get outstanding(): number {
    return this.#board.outstanding;
  }

  /** Release leases whose completion never came. Returns how many. */
  expire(now: number): number {
    const expired = this.#board.expire(now);
    for (const lease of expired) this.#tickets.delete(lease.ticket);
    return expired.length;
  }

  /** The index and what it needs to be read back (origin ids by slot, capacities). */
  snapshot(): Uint8Array {
    const slots = this.#slots.order.map((slot) => ({
      slot,
      id: this.#slots.at(slot).settings.id,
      ...this.#capacity.saved(slot),
    }));
    return encodeSnapshot({ chunkBytes: this.#pool.chunkBytes, slots }, this.#index.snapshot());
  }

  /**
   * Start from a snapshot (before any traffic): the index and each origin's slot and learned
   * capacity come back; origins no longer in settings are dropped, new ones get free slots.
   * A snapshot taken with another chunk size names other prefixes and is ignored.
   */
  restore(bytes: Uint8Array): void {
    const { header, index } = decodeSnapshot(bytes);
    if (header.chunkBytes !== this.#pool.chunkBytes) return;
    this.#index = RadixIndex.restore(index, { maxChunks: this.#pool.indexMaxChunks });
    this.#board = new LoadBoard(boardOptions(this.#pool));
    this.#tickets.clear();
    this.#capacity.restore(header.slots);
    for (const slot of this.#slots.restore(header.slots, this.#pool.origins)) this.#clear(slot);
    this.#configureOrigins();
  }

  stats(now: number): RouterStats {
    const origins: OriginStats[] = this.#slots.order.map((slot) => {
      const { settings, routed } = this.#slots.at(slot);
      const v = this.#board.view(slot, now);
      return {
        id: settings.id,
        url: settings.url,
        eligible: v.eligible,
        health: v.health,
        circuit: v.circuit,
        consecutiveFailures: v.consecutiveFailures,
        outstanding: v.outstanding,
        queuedPrefillTokens: Math.round(v.queuedPrefillTokens),
        activeTokens: v.activeTokens,
        engine: v.engine,
        reportAgeMs: v.reportAgeMs,
        ownedTokens: this.#index.owned(slot) * this.tokensPerChunk,
        capacityTokens: this.#capacity.effectiveChunks(slot) * this.tokensPerChunk,
        routed,
      };
    });
    const { chunks, nodes, ownerships, bytes } = this.#index.stats();
    return {
      model: this.model,
      policy: this.#policy.name,
      origins,
      index: { chunks, nodes, ownerships, bytes },
      decisions: { total: this.#log.total, byReason: { ...this.#log.byReason } },
      accuracy: { ...this.#capacity.accuracy },
      failures: { ...this.#failures },
      shadows: this.#shadows.stats(),
      hotPrefixes: this.#hotPrefixes(now),
      outstanding: this.#board.outstanding,
      recent: this.#log.recent(),
    };
  }

  /** The hottest prefixes and which origins the index believes hold each whole. */
  #hotPrefixes(now: number): HotPrefixStats[] {
    return this.#hot.top(HOT_PREFIXES_SHOWN, now).map((p) => {
      this.#index.match(p.hashes, this.#matched);
      const origins = this.#slots.order
        .filter((slot) => (this.#matched[slot] as number) >= p.depth)
        .map((slot) => this.#slots.at(slot).settings.id);
      return {
        id: (p.hashes.at(-1) as number).toString(16),
        tokens: p.depth * this.tokensPerChunk,
        requests: p.requests,
        error: p.error,
        ratePerSecond: p.ratePerSecond,
        origins,
      };
    });
  }

  /**
   * Test-only: throws if the router's bookkeeping disagrees with itself (a ticket without its
   * lease, an origin's slot or capacity out of step with the index) or the index's invariants
   * are broken. O(size): never on a hot path.
   */
  checkInvariants(): void {
    this.#index.checkInvariants();
    const fail = (msg: string): never => {
      throw new Error(`router invariant broken: ${msg}`);
    };
    if (this.#tickets.size !== this.#board.outstanding) {
      fail(`${this.#tickets.size} tickets but ${this.#board.outstanding} leases`);
    }
    for (const [ticket, claim] of this.#tickets) {
      if (this.#board.lookup(ticket)?.origin !== claim.slot) fail(`ticket ${ticket}'s lease`);
    }
    for (const [position, slot] of this.#slots.order.entries()) {
      const { id } = this.#slots.at(slot).settings;
      if (id !== this.#pool.origins[position]?.id) fail(`origin ${id} out of settings order`);
      if (this.#slots.slotOf(id) !== slot) fail(`origin ${id}'s slot`);
      const { configuredChunks, effectiveChunks } = this.#capacity.saved(slot);
      if (this.#index.capacity(slot) !== effectiveChunks) fail(`slot ${slot}'s capacity`);
      if (effectiveChunks > configuredChunks) fail(`slot ${slot} over its configured size`);
    }
  }
}

function tokensPerChunk(pool: PoolSettings): number {
  return pool.chunkBytes / BYTES_PER_TOKEN;
}

function boardOptions(pool: PoolSettings) {
  return {
    leaseMs: pool.leaseMs,
    failureThreshold: pool.circuit.failureThreshold,
    cooldownMs: pool.circuit.cooldownMs,
    reportFreshMs: pool.reportFreshMs,
    reportStaleMs: pool.reportStaleMs,
  };
}
