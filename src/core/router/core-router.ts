/**
 * The core router of one pool: the route / reroute / cancel / complete / ingest / snapshot
 * protocol over the radix index, the load board and the pool's policy. It is the whole routing
 * brain; the Durable Object holds one and persists its snapshot, the Worker's fallback holds one
 * with `prefix-hash`, and the simulator drives one directly. It never reads the clock (`now` is
 * passed in, milliseconds) or a global random source.
 *
 * Its parts sit beside it: origin ids, slots and the settings order (origin-slots.ts), the
 * index by slot and its claims (claim-index.ts), live tickets (tickets.ts), the policy and its
 * shadows (pool-policy.ts), what a policy sees of an origin (origin-view.ts), capacity learned
 * from engine reports (capacity-learner.ts), the failover order (failover-order.ts) and the
 * figures of `stats` (router-stats.ts). With `indexFeed: "engine-events"` the index follows
 * the engines' kv events instead of the router's claims and corrections (index-feed.ts).
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { EngineEvent } from "../engine-events.ts";
import { boardOptions, LoadBoard } from "../load-board/load-board.ts";
import { asPosition, type Slot } from "../origin-indexes.ts";
import { usesActiveChunks } from "../policies/index.ts";
import type { PolicyContext } from "../policies/policy.ts";
import { prefillWork } from "../prefill-work.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { CapacityLearner } from "./capacity-learner.ts";
import { type Claim, ClaimIndex } from "./claim-index.ts";
import { DecisionLog } from "./decision-log.ts";
import { failoverOrder } from "./failover-order.ts";
import { HotPrefixes } from "./hot-prefixes.ts";
import { OriginSlots } from "./origin-slots.ts";
import { originView } from "./origin-view.ts";
import { PoolPolicy } from "./pool-policy.ts";
import { decodeSnapshot, encodeSnapshot } from "./router-snapshot.ts";
import { hotPrefixStats, originStats } from "./router-stats.ts";
import type {
  FailureKind,
  Outcome,
  RouteDecision,
  RouteRequest,
  RouterStats,
} from "./router-types.ts";
import { Tickets } from "./tickets.ts";

/** Hot prefixes listed by `stats`. */
const HOT_PREFIXES_SHOWN = 10;

export interface CoreRouterOptions {
  model: string;
  /** Seed of the policy's random source (tie-breaks, random, power-of-two). */
  seed?: number;
  /** Makes tickets unique across restarts of the holder (e.g. a random id per object start). */
  ticketPrefix?: string;
}

export class CoreRouter {
  readonly model: string;
  #pool!: PoolSettings;
  readonly #policy: PoolPolicy;
  readonly #hot = new HotPrefixes();
  #claims!: ClaimIndex;
  #board: LoadBoard;
  readonly #slots = new OriginSlots();
  readonly #capacity: CapacityLearner;
  readonly #tickets: Tickets;
  readonly #log = new DecisionLog();
  readonly #failures: Partial<Record<FailureKind, number>> = {};

  constructor(pool: PoolSettings, options: CoreRouterOptions) {
    this.model = options.model;
    this.#policy = new PoolPolicy(options.seed ?? 1);
    this.#tickets = new Tickets(options.ticketPrefix ?? "t");
    this.#board = new LoadBoard(boardOptions(pool, usesActiveChunks(pool)));
    this.#capacity = new CapacityLearner(tokensPerChunk(pool), (slot, chunks) =>
      this.#claims.setCapacity(slot, chunks),
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
    this.#board.options = boardOptions(pool, usesActiveChunks(pool));
    if (
      old?.chunkBytes !== pool.chunkBytes ||
      old.indexMaxChunks !== pool.indexMaxChunks ||
      old.indexFeed !== pool.indexFeed
    ) {
      // Hashes of another chunk size name other prefixes, and another feed other claims: the
      // old index is meaningless.
      this.#claims = new ClaimIndex(this.tokensPerChunk, pool.indexMaxChunks, pool.indexFeed);
      this.#hot.clear();
      this.#capacity.reindex(this.tokensPerChunk);
    }
    this.#policy.configure(pool.policy, pool.shadowPolicies);
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
    this.#claims.forget(slot);
    this.#board.remove(slot);
    this.#capacity.forget(slot);
    this.#tickets.dropSlot(slot);
  }

  /**
   * Match the hashes, let the policy decide over the load board's view, then lease the request
   * to the origin and claim the prompt for it in the index, so the next request with this
   * prefix sees it at once (claim-index.ts). No origin eligible: no ticket, and the reason.
   */
  route(request: RouteRequest, now: number): RouteDecision {
    this.expire(now);
    const { chunkHashes: hashes, promptTokens } = request;
    this.#claims.match(hashes);
    this.#hot.observe(hashes, now);
    const context = this.#context(request, now);
    const { origin: decided, reason, ranking } = this.#policy.decide(context);
    const policy = this.#policy.name;
    if (decided < 0) {
      this.#log.record({ at: now, origin: null, reason, matchedTokens: 0, promptTokens });
      return { origin: null, alternates: [], matchedTokens: 0, policy, reason, ticket: null };
    }
    // A policy's decision indexes its context's origins: a position in the settings order.
    const chosen = asPosition(decided);
    const slot = this.#slots.slotAt(chosen);
    const ticket = this.#tickets.issue();
    const { matchedTokens } = this.#lease(ticket, hashes, slot, promptTokens, now);
    const origin = this.#slots.at(slot).settings.id;
    this.#log.record({ at: now, origin, reason, matchedTokens, promptTokens });
    const budget = this.#pool.retry.maxAttempts - 1;
    const alternates = failoverOrder(context.origins, chosen, ranking, budget);
    return { origin, alternates, matchedTokens, policy, reason, ticket };
  }

  /** What the policy sees: the origins in settings order (by position), matches and load. */
  #context(request: RouteRequest, now: number): PolicyContext {
    const { chunkHashes, promptTokens } = request;
    const order = this.#slots.order;
    const tokensPerChunk = this.tokensPerChunk;
    return {
      request,
      origins: order.map((slot) =>
        originView(
          this.#slots.at(slot).settings,
          this.#board.view(slot, now),
          this.#pool,
          this.#claims.ownedChunks(slot) * tokensPerChunk,
          tokensPerChunk,
        ),
      ),
      matchedTokens: order.map((slot) => this.#claims.matchedTokens(slot, promptTokens)),
      tokensPerChunk,
      attentionTokens: this.#pool.prefillAttentionTokens,
      hotTokens: (minHeat: number) =>
        this.#claims.hotTokens(chunkHashes, promptTokens, now, minHeat),
      addedChunks: (i: number) =>
        this.#board.addedChunks(
          this.#slots.slotAt(asPosition(i)),
          chunkHashes,
          promptTokens > chunkHashes.length * tokensPerChunk,
        ),
      now,
      rng: this.#policy.rng,
    };
  }

  /** Count the request against the origin and claim the prompt there (just matched). */
  #lease(
    ticket: string,
    hashes: ArrayLike<number>,
    slot: Slot,
    promptTokens: number,
    now: number,
  ): Claim {
    const claim = this.#claims.claim(hashes, slot, promptTokens, now);
    const work = prefillWork(claim.matchedTokens, promptTokens, this.#pool.prefillAttentionTokens);
    this.#board.lease(ticket, slot, promptTokens, work, now, {
      uncachedTokens: promptTokens - claim.matchedTokens,
      hashes,
      partial: promptTokens > hashes.length * this.tokensPerChunk,
    });
    this.#slots.at(slot).routed++;
    this.#tickets.set(ticket, claim);
    return claim;
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
    this.#claims.unclaim(claim);
    this.#onFailure(claim.slot, failure, now);
    this.#claims.match(claim.hashes);
    return this.#lease(ticket, claim.hashes, nextSlot, promptTokens, now).matchedTokens;
  }

  /**
   * The ticket will not be used (e.g. a decision that arrived after the Worker stopped waiting):
   * release it as if it had never been routed, blaming no origin. False for an unknown ticket.
   */
  cancel(ticket: string, now: number): boolean {
    const claim = this.#tickets.take(ticket);
    if (!claim) return false;
    this.#board.release(ticket, false, now);
    this.#board.onAbandon(claim.slot);
    this.#claims.unclaim(claim);
    return true;
  }

  /** The request ended. Returns false for an unknown (expired or foreign) ticket. */
  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const claim = this.#tickets.take(ticket);
    if (!claim) return false;
    const { ok, failure } = outcome;
    const beforeFirstByte = !ok && failure !== undefined && failure !== "stream";
    this.#board.release(ticket, !beforeFirstByte, now);
    if (beforeFirstByte) this.#claims.unclaim(claim);
    if (failure !== undefined) this.#onFailure(claim.slot, failure, now);
    if (ok) {
      this.#board.onSuccess(claim.slot);
      if (outcome.cachedTokens !== undefined) {
        this.#capacity.learn(claim.slot, claim, outcome, this.#claims.feed === "router");
      }
    } else if (failure === undefined) {
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
          this.#claims.forget(slot);
          break;
        case "health":
          this.#board.setHealth(slot, event.status);
          break;
        case "kv-stored":
        case "kv-removed":
          this.#claims.applyKvEvent(slot, event, now);
          break;
        default: {
          const unknown: never = event;
          throw new Error(`unknown event ${JSON.stringify(unknown)}`);
        }
      }
    }
    return true;
  }

  /**
   * The ticket's first token came back: its prefill is done (prefilling tokens, queued prefill).
   * The Worker does not call it (one more call to the object per request); the simulator does
   * for policies whose real system streams the tokens through its router (Dynamo).
   */
  firstToken(ticket: string, now: number): boolean {
    return this.#board.firstToken(ticket, now);
  }

  /** Requests routed and not yet completed, cancelled or expired. */
  get outstanding(): number {
    return this.#board.outstanding;
  }

  /** Release leases whose completion never came. Returns how many. */
  expire(now: number): number {
    const expired = this.#board.expire(now);
    for (const lease of expired) this.#tickets.take(lease.ticket);
    return expired.length;
  }

  /** The index and what it needs to be read back (origin ids by slot, capacities). */
  snapshot(): Uint8Array {
    const slots = this.#slots.order.map((slot) => ({
      slot,
      id: this.#slots.at(slot).settings.id,
      ...this.#capacity.saved(slot),
    }));
    return encodeSnapshot({ chunkBytes: this.#pool.chunkBytes, slots }, this.#claims.snapshot());
  }

  /**
   * Start from a snapshot (before any traffic): the index and each origin's slot and learned
   * capacity come back; origins no longer in settings are dropped, new ones get free slots.
   * A snapshot taken with another chunk size names other prefixes and is ignored.
   */
  restore(bytes: Uint8Array): void {
    const { header, index } = decodeSnapshot(bytes);
    if (header.chunkBytes !== this.#pool.chunkBytes) return;
    this.#claims = new ClaimIndex(
      this.tokensPerChunk,
      this.#pool.indexMaxChunks,
      this.#pool.indexFeed,
      index,
    );
    this.#board = new LoadBoard(boardOptions(this.#pool, usesActiveChunks(this.#pool)));
    this.#tickets.clear();
    this.#capacity.restore(header.slots);
    for (const slot of this.#slots.restore(header.slots, this.#pool.origins)) this.#clear(slot);
    this.#configureOrigins();
  }

  stats(now: number): RouterStats {
    const tokensPerChunk = this.tokensPerChunk;
    const origins = this.#slots.order.map((slot) => {
      const { settings, routed } = this.#slots.at(slot);
      const load = this.#board.view(slot, now);
      const ownedChunks = this.#claims.ownedChunks(slot);
      const capacityChunks = this.#capacity.effectiveChunks(slot);
      return originStats({ settings, routed, load, ownedChunks, capacityChunks }, tokensPerChunk);
    });
    const { chunks, nodes, ownerships, bytes } = this.#claims.stats();
    const hot = this.#hot.top(HOT_PREFIXES_SHOWN, now);
    return {
      model: this.model,
      policy: this.#policy.name,
      origins,
      index: { chunks, nodes, ownerships, bytes },
      decisions: { total: this.#log.total, byReason: { ...this.#log.byReason } },
      accuracy: { ...this.#capacity.accuracy },
      failures: { ...this.#failures },
      shadows: this.#policy.shadowStats(),
      hotPrefixes: hot.map((p) =>
        hotPrefixStats(p, this.#holders(p.hashes, p.depth), tokensPerChunk),
      ),
      outstanding: this.#board.outstanding,
      recent: this.#log.recent(),
    };
  }

  /** Ids of the origins the index believes hold the first `depth` chunks of `hashes`. */
  #holders(hashes: ArrayLike<number>, depth: number): string[] {
    const holders = this.#claims.holders(hashes, depth, this.#slots.order);
    return holders.map((slot) => this.#slots.at(slot).settings.id);
  }

  /** Test-only: throws if a part's or the index's invariants are broken. O(size). */
  checkInvariants(): void {
    this.#claims.checkInvariants();
    this.#slots.checkInvariants(this.#pool.origins);
    this.#tickets.checkInvariants(this.#board);
    this.#capacity.checkInvariants(this.#slots.order, (slot) => this.#claims.capacityChunks(slot));
  }
}

function tokensPerChunk(pool: PoolSettings): number {
  return pool.chunkBytes / BYTES_PER_TOKEN;
}
