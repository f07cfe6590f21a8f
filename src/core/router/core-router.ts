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
 * from engine reports (capacity-learner.ts), the failover order (failover-order.ts), whether
 * and where to prefill remotely (disaggregation.ts, prefill-choice.ts) and the figures of
 * `stats` (router-stats.ts). With `indexFeed: "engine-events"` the index follows the engines'
 * kv events instead of the router's claims and corrections (index-feed.ts).
 *
 * Edge coordination (src/core/edge) uses it twice: an isolate's replica routes with `edge`
 * hooks (edge-hooks.ts: load from the coordinator's vector, ties seeded by the request, a pick
 * among the best candidates) and applies other isolates' claims (`adopt`, `drop`,
 * `adoptCapacity`); a coordinator applies each isolate's decisions with `record` and then
 * `reroute`, `cancel` and `complete` as usual, and reads `loads`.
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { EngineEvent } from "../engine-events.ts";
import { boardOptions, LoadBoard } from "../load-board/load-board.ts";
import { asPosition, type Slot } from "../origin-indexes.ts";
import { usesActiveChunks } from "../policies/index.ts";
import type { PolicyContext } from "../policies/policy.ts";
import { prefillWork } from "../prefill-work.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import type { LearnedCapacity } from "./capacity-learner.ts";
import { CapacityLearner } from "./capacity-learner.ts";
import { type Claim, ClaimIndex } from "./claim-index.ts";
import { DecisionLog } from "./decision-log.ts";
import { type Disaggregation, decideDisaggregation } from "./disaggregation.ts";
import type { EdgeHooks, OriginLoad, RecordedClaim, RecordedRoute } from "./edge-hooks.ts";
import { failoverOrder } from "./failover-order.ts";
import { type HotPrefix, HotPrefixes } from "./hot-prefixes.ts";
import { OriginSlots } from "./origin-slots.ts";
import { originView } from "./origin-view.ts";
import { PoolPolicy } from "./pool-policy.ts";
import type { PrefillCandidate } from "./prefill-choice.ts";
import { decodeSnapshot, encodeSnapshot } from "./router-snapshot.ts";
import { hotPrefixStats, originStats } from "./router-stats.ts";
import type {
  FailureKind,
  Outcome,
  PrefillLeg,
  RouteDecision,
  RouteRequest,
  RouterStats,
} from "./router-types.ts";
import { prefillLeaseKey, Tickets, ticketOfPrefillLease } from "./tickets.ts";

/** Hot prefixes listed by `stats`. */
const HOT_PREFIXES_SHOWN = 10;

export interface CoreRouterOptions {
  model: string;
  /** Seed of the policy's random source (tie-breaks, random, power-of-two). */
  seed?: number;
  /** Makes tickets unique across restarts of the holder (e.g. a random id per object start). */
  ticketPrefix?: string;
  /** An edge replica's load, seeds and pick (edge-hooks.ts); absent in the object. */
  edge?: EdgeHooks;
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
  /** The pool has prefill or decode origins: requests get a P/D decision. */
  #disaggregated = false;
  #prefillFailed = 0;
  readonly #edge: EdgeHooks | undefined;

  constructor(pool: PoolSettings, options: CoreRouterOptions) {
    this.model = options.model;
    this.#policy = new PoolPolicy(options.seed ?? 1);
    this.#tickets = new Tickets(options.ticketPrefix ?? "t");
    this.#edge = options.edge;
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
    this.#disaggregated = pool.origins.some((o) => o.role !== "both");
    for (const slot of this.#slots.sync(pool.origins)) this.#clear(slot);
    this.#configureOrigins();
  }

  /** Each origin's prefill speed and capacity from settings (a no-op where nothing changed). */
  #configureOrigins(): void {
    const pool = this.#pool;
    for (const slot of this.#slots.order) {
      const { settings } = this.#slots.at(slot);
      this.#board.ensure(slot, this.#speed(slot));
      this.#capacity.configure(slot, settings.kvCapacityTokens ?? pool.kvCapacityTokens);
    }
  }

  #speed(slot: Slot): number {
    return (
      this.#slots.at(slot).settings.prefillTokensPerSecond ?? this.#pool.prefillTokensPerSecond
    );
  }

  /**
   * The origin in `slot` left: forget what is filed under the slot before another takes it.
   * Its tickets go with its leases, or their completions would land on the slot's next origin;
   * their prefill legs elsewhere end, and prefill legs it served end.
   */
  #clear(slot: Slot): void {
    this.#claims.forget(slot);
    this.#board.remove(slot);
    this.#capacity.forget(slot);
    for (const key of this.#tickets.dropSlot(slot)) this.#board.drop(key);
  }

  /**
   * Match the hashes, let the policy decide over the load board's view, then lease the request
   * to the origin and claim the prompt for it in the index, so the next request with this
   * prefix sees it at once (claim-index.ts). No origin eligible: no ticket, and the reason.
   * In a pool with prefill or decode origins the policy's choice is the decode origin (prefill
   * origins are not eligible to it); disaggregation.ts then says whether a prefill origin
   * prefills, and that origin is leased and claimed too.
   */
  route(request: RouteRequest, now: number): RouteDecision {
    this.expire(now);
    const { chunkHashes: hashes, promptTokens } = request;
    this.#claims.match(hashes);
    this.#hot.observe(hashes, now);
    const context = this.#context(request, now);
    const edge = this.#edge;
    if (edge) this.#policy.reseed(edge.seed(context));
    const policyDecision = this.#policy.decide(context);
    const decision = edge ? edge.pick(context, policyDecision) : policyDecision;
    const { origin: decided, reason, ranking } = decision;
    const policy = this.#policy.name;
    if (decided < 0) return this.#unrouted(policy, reason, promptTokens, now);
    // A policy's decision indexes its context's origins: a position in the settings order.
    const chosen = asPosition(decided);
    const slot = this.#slots.slotAt(chosen);
    const pd = this.#disaggregated ? this.#disaggregate(request, slot, now) : null;
    const ticket = this.#tickets.issue();
    const prefillSlot = pd?.prefill?.slot ?? null;
    const { matchedTokens } = this.#lease(ticket, hashes, slot, promptTokens, prefillSlot, now);
    const origin = this.#slots.at(slot).settings.id;
    const prefill: PrefillLeg | null = pd?.prefill
      ? {
          origin: this.#slots.at(pd.prefill.slot).settings.id,
          matchedTokens: pd.prefill.matchedTokens,
        }
      : null;
    const pdReason = pd?.reason ?? null;
    const prefillOrigin = prefill?.origin ?? null;
    this.#log.record({
      at: now,
      origin,
      reason,
      matchedTokens,
      promptTokens,
      prefillOrigin,
      pdReason,
    });
    const budget = this.#pool.retry.maxAttempts - 1;
    const alternates = failoverOrder(context.origins, chosen, ranking, budget);
    return { origin, alternates, matchedTokens, policy, reason, ticket, pdReason, prefill };
  }

  /** No origin is eligible: no ticket, and the policy's reason. */
  #unrouted(policy: string, reason: string, promptTokens: number, now: number): RouteDecision {
    const none = { origin: null, matchedTokens: 0, pdReason: null };
    this.#log.record({ ...none, at: now, reason, promptTokens, prefillOrigin: null });
    return { ...none, alternates: [], policy, reason, ticket: null, prefill: null };
  }

  /** The P/D decision for a request whose decode origin is in `decodeSlot` (just matched). */
  #disaggregate(request: RouteRequest, decodeSlot: Slot, now: number): Disaggregation {
    const { promptTokens } = request;
    const prefill: PrefillCandidate[] = [];
    for (const slot of this.#slots.order) {
      if (this.#slots.at(slot).settings.role !== "prefill") continue;
      const load = this.#board.view(slot, now);
      if (!load.eligible) continue;
      prefill.push({
        slot,
        matchedTokens: this.#claims.matchedTokens(slot, promptTokens),
        queuedPrefillTokens: load.queuedPrefillTokens,
        prefillTokensPerSecond: this.#speed(slot),
      });
    }
    return decideDisaggregation({
      rule: this.#pool.disaggregation,
      promptTokens,
      n: request.n ?? 1,
      decodeRole: this.#slots.at(decodeSlot).settings.role,
      decodeMatchedTokens: this.#claims.matchedTokens(decodeSlot, promptTokens),
      prefill,
      attentionTokens: this.#pool.prefillAttentionTokens,
      rng: this.#policy.rng,
    });
  }

  /** What the policy sees: the origins in settings order (by position), matches and load. */
  #context(request: RouteRequest, now: number): PolicyContext {
    const { chunkHashes, promptTokens } = request;
    const order = this.#slots.order;
    const tokensPerChunk = this.tokensPerChunk;
    const edge = this.#edge;
    return {
      request,
      origins: order.map((slot) => {
        const { settings } = this.#slots.at(slot);
        const own = this.#board.view(slot, now);
        return originView(
          settings,
          edge ? edge.load(settings.id, own, now) : own,
          this.#pool,
          this.#claims.ownedChunks(slot) * tokensPerChunk,
          tokensPerChunk,
        );
      }),
      matchedTokens: order.map((slot) => this.#claims.matchedTokens(slot, promptTokens)),
      tokensPerChunk,
      attentionTokens: this.#pool.prefillAttentionTokens,
      hotTokens: (minHeat: number) =>
        this.#claims.hotTokens(chunkHashes, promptTokens, now, minHeat),
      sharedTokens: (minHeat: number) =>
        this.#claims.sharedTokens(chunkHashes, promptTokens, now, minHeat),
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

  /**
   * Count the request against the origin and claim the prompt there (just matched); with a
   * prefill origin, that one is leased (under the prefill key) and claimed too, and the prefill
   * work is its alone: the origin in `slot` takes the KV.
   */
  #lease(
    ticket: string,
    hashes: ArrayLike<number>,
    slot: Slot,
    promptTokens: number,
    prefillSlot: Slot | null,
    now: number,
  ): Claim {
    const claim = this.#claims.claim(hashes, slot, promptTokens, now);
    let prefill: Claim | null = null;
    if (prefillSlot !== null) {
      prefill = this.#claims.claim(hashes, prefillSlot, promptTokens, now);
      const key = prefillLeaseKey(ticket);
      this.#leaseBoard(key, prefillSlot, hashes, promptTokens, prefill.matchedTokens, now);
      this.#slots.at(prefillSlot).routed++;
    }
    const cached = prefill ? promptTokens : claim.matchedTokens;
    this.#leaseBoard(ticket, slot, hashes, promptTokens, cached, now);
    this.#slots.at(slot).routed++;
    this.#tickets.set(ticket, claim, prefill);
    return claim;
  }

  /** A board lease whose prefill work is the prompt's beyond `cachedTokens`. */
  #leaseBoard(
    key: string,
    slot: Slot,
    hashes: ArrayLike<number>,
    promptTokens: number,
    cachedTokens: number,
    now: number,
  ): void {
    const work = prefillWork(cachedTokens, promptTokens, this.#pool.prefillAttentionTokens);
    this.#board.lease(key, slot, promptTokens, work, now, {
      uncachedTokens: promptTokens - cachedTokens,
      hashes,
      partial: promptTokens > hashes.length * this.tokensPerChunk,
    });
  }

  /**
   * Another router routed `ticket` to `originId` (a coordinator applying an edge replica's
   * record; its prompt is the path to the chunk `parent` names, then `run`): lease and claim it
   * as `route` does after its policy, so `reroute`, `cancel` and `complete` work on it. Returns
   * the prompt's hashes (empty when `parent` is unknown here: leased, not claimed), the chunks
   * the origin held before and the deepest any origin held; null for an unknown origin or a
   * live ticket.
   */
  record(ticket: string, route: RecordedRoute, now: number): RecordedClaim | null {
    this.expire(now);
    const slot = this.#slots.slotOf(route.origin);
    if (slot === undefined || this.#tickets.get(ticket)) return null;
    const path = route.parent === null ? [] : this.#claims.pathOf(route.parent);
    const hashes = path === null ? [] : path.concat(route.run);
    const deepestChunks = this.#claims.match(hashes);
    this.#hot.observe(hashes, now);
    const { promptTokens, reason } = route;
    const { matchedChunks, matchedTokens } = this.#lease(
      ticket,
      hashes,
      slot,
      promptTokens,
      null,
      now,
    );
    this.#log.record({
      at: now,
      origin: route.origin,
      reason,
      matchedTokens,
      promptTokens,
      prefillOrigin: null,
      pdReason: null,
    });
    return { hashes, heldChunks: matchedChunks, deepestChunks };
  }

  /**
   * Another router claimed a prompt for `originId` (an edge replica applying its coordinator's
   * delta): the path to the chunk `parent` names, then `run`. No lease: the coordinator's load
   * vector counts it. False when the origin is unknown or no origin here holds `parent`.
   */
  adopt(originId: string, parent: number | null, run: readonly number[], now: number): boolean {
    const slot = this.#slots.slotOf(originId);
    return slot !== undefined && this.#claims.claimRun(slot, parent, run, now);
  }

  /** `originId` no longer holds the chunk named `hash` nor below it (another router's failure). */
  drop(originId: string, hash: number): void {
    const slot = this.#slots.slotOf(originId);
    if (slot !== undefined) this.#claims.dropFrom(slot, hash);
  }

  /** `originId`'s capacity as another router learned it (a replica takes its coordinator's). */
  adoptCapacity(originId: string, learned: LearnedCapacity): void {
    const slot = this.#slots.slotOf(originId);
    if (slot !== undefined) this.#capacity.adopt(slot, learned);
  }

  /** The `k` hottest shallow prefixes (hot-prefixes.ts), hottest first. */
  hottest(k: number, now: number): HotPrefix[] {
    return this.#hot.top(k, now);
  }

  /** Each origin's load as this router reads it, in settings order, with its capacity. */
  loads(now: number): OriginLoad[] {
    return this.#slots.order.map((slot) => ({
      id: this.#slots.at(slot).settings.id,
      load: this.#board.view(slot, now),
      capacity: this.#capacity.saved(slot),
    }));
  }

  /**
   * The ticket's origin failed before its first byte; `next` will be tried instead, alone: a
   * prefill leg ends here (its lease released, its claim taken back, the prefill origin not
   * blamed), since the decode that was to take its KV is gone. Returns the prompt tokens `next`
   * is believed to hold, or null for an unknown ticket or origin, or a prefill origin as `next`.
   */
  reroute(ticket: string, failure: FailureKind, next: string, now: number): number | null {
    const t = this.#tickets.get(ticket);
    const nextSlot = this.#slots.slotOf(next);
    if (!t || nextSlot === undefined || this.#slots.at(nextSlot).settings.role === "prefill")
      return null;
    const { claim } = t;
    const promptTokens = this.#board.release(ticket, false, now)?.promptTokens ?? 0;
    this.#claims.unclaim(claim);
    this.#onFailure(claim.slot, failure, now);
    if (t.prefill) this.#abandonPrefill(ticket, t.prefill, now);
    this.#claims.match(claim.hashes);
    return this.#lease(ticket, claim.hashes, nextSlot, promptTokens, null, now).matchedTokens;
  }

  /**
   * The ticket's prefill leg failed (not a 4xx: the request itself is fine); the decode origin
   * will serve it alone. The prefill origin's claim is taken back and the failure counted
   * against it; the prompt's prefill work moves to the decode origin. Returns the prompt tokens
   * the decode origin is believed to hold, or null for an unknown ticket or one with no prefill
   * leg.
   */
  prefillFailed(ticket: string, failure: FailureKind, now: number): number | null {
    const t = this.#tickets.get(ticket);
    if (!t?.prefill) return null;
    const { claim, prefill } = t;
    this.#board.release(prefillLeaseKey(ticket), false, now);
    this.#claims.unclaim(prefill);
    this.#onFailure(prefill.slot, failure, now);
    this.#prefillFailed++;
    t.prefill = null;
    const promptTokens = this.#board.release(ticket, false, now)?.promptTokens ?? 0;
    this.#leaseBoard(ticket, claim.slot, claim.hashes, promptTokens, claim.matchedTokens, now);
    return claim.matchedTokens;
  }

  /** A prefill leg ends unused: release it, take its claim back, blame nobody. */
  #abandonPrefill(ticket: string, prefill: Claim, now: number): void {
    this.#board.release(prefillLeaseKey(ticket), false, now);
    this.#board.onAbandon(prefill.slot);
    this.#claims.unclaim(prefill);
  }

  /**
   * The ticket will not be used (e.g. a decision that arrived after the Worker stopped waiting):
   * release it as if it had never been routed, blaming no origin. False for an unknown ticket.
   */
  cancel(ticket: string, now: number): boolean {
    const t = this.#tickets.take(ticket);
    if (!t) return false;
    this.#board.release(ticket, false, now);
    this.#board.onAbandon(t.claim.slot);
    this.#claims.unclaim(t.claim);
    if (t.prefill) this.#abandonPrefill(ticket, t.prefill, now);
    return true;
  }

  /**
   * The request ended. Returns false for an unknown (expired or foreign) ticket. A prefill leg
   * still live ends with it (`#settlePrefill`). Capacity is learned from the `cachedTokens` of
   * whichever origin prefilled: the prefill leg's (`outcome.prefill`) when disaggregated.
   */
  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const t = this.#tickets.take(ticket);
    if (!t) return false;
    const { claim, prefill } = t;
    const { ok, failure } = outcome;
    const beforeFirstByte = !ok && failure !== undefined && failure !== "stream";
    this.#board.release(ticket, !beforeFirstByte, now);
    if (beforeFirstByte) this.#claims.unclaim(claim);
    if (failure !== undefined) this.#onFailure(claim.slot, failure, now);
    if (prefill) this.#settlePrefill(ticket, prefill, outcome, beforeFirstByte, now);
    if (ok) {
      this.#board.onSuccess(claim.slot);
      // A decode origin counts the KV it was sent as cached: only its own prefill teaches.
      if (!prefill && outcome.cachedTokens !== undefined) {
        this.#capacity.learn(claim.slot, claim, outcome, this.#claims.feed === "router");
      }
    } else if (failure === undefined) {
      // Neither success nor the origin's fault (client left, 4xx): a half-open probe that ends
      // this way proves nothing, so the next request may probe.
      this.#board.onAbandon(claim.slot);
    }
    return true;
  }

  /**
   * A request ended with its prefill leg live. The leg prefilled if it answered (its usage
   * came back) or the decode got past its first byte (it needed the KV), and then counts as a
   * success; if the decode failed before its first byte and nothing came back from the leg,
   * its claim is taken back. A client that left proves nothing either way.
   */
  #settlePrefill(
    ticket: string,
    prefill: Claim,
    outcome: Outcome,
    decodeBeforeFirstByte: boolean,
    now: number,
  ): void {
    const answered = outcome.prefill !== undefined;
    const prefilled = answered || !decodeBeforeFirstByte;
    this.#board.release(prefillLeaseKey(ticket), prefilled, now);
    if (!prefilled) this.#claims.unclaim(prefill);
    if (answered || outcome.ok || outcome.failure === "stream") {
      this.#board.onSuccess(prefill.slot);
      const usage = outcome.prefill;
      if (usage?.cachedTokens !== undefined) {
        this.#capacity.learn(prefill.slot, prefill, usage, this.#claims.feed === "router");
      }
    } else {
      this.#board.onAbandon(prefill.slot);
    }
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
   * for policies whose real system streams the tokens through its router (Dynamo). A live
   * prefill leg is done too: the decode origin's first token needed its KV.
   */
  firstToken(ticket: string, now: number): boolean {
    if (this.#tickets.get(ticket)?.prefill) this.#board.firstToken(prefillLeaseKey(ticket), now);
    return this.#board.firstToken(ticket, now);
  }

  /** Requests routed and not yet completed, cancelled or expired. */
  get outstanding(): number {
    return this.#tickets.size;
  }

  /** Release leases whose completion never came. Returns how many requests that ended. */
  expire(now: number): number {
    let requests = 0;
    for (const lease of this.#board.expire(now)) {
      // A prefill lease is taken with its ticket's and no later, so the two expire together.
      if (ticketOfPrefillLease(lease.ticket) === null && this.#tickets.take(lease.ticket))
        requests++;
    }
    return requests;
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
      pd: { byReason: { ...this.#log.byPdReason }, prefillFailed: this.#prefillFailed },
      accuracy: { ...this.#capacity.accuracy },
      failures: { ...this.#failures },
      shadows: this.#policy.shadowStats(),
      hotPrefixes: hot.map((p) =>
        hotPrefixStats(p, this.#holders(p.hashes, p.depth), tokensPerChunk),
      ),
      outstanding: this.#tickets.size,
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
