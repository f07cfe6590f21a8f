/**
 * The core router of one pool: the route / reroute / cancel / complete / ingest / snapshot
 * protocol over the radix index, the load board and the pool's policy. It is the whole routing
 * brain; the Durable Object holds one and persists its snapshot, the Worker's fallback holds one
 * with `prefix-hash`, and the simulator drives one directly. It never reads the clock (`now` is
 * passed in, milliseconds) or a global random source.
 *
 * It decides; its parts beside it keep the books. Origin ids, slots and the settings order
 * (origin-slots.ts), the index by slot and its claims (claim-index.ts), what each ticket holds
 * and how each leg is undone or settled (ticket-legs.ts over tickets.ts), the policy and its
 * shadows (pool-policy.ts) and what it sees (policy-context.ts, origin-view.ts), capacity
 * learned from engine reports (capacity-learner.ts), where engine events land
 * (apply-engine-event.ts), the failover order (failover-order.ts), whether and where to
 * prefill remotely (pd-decision.ts over disaggregation.ts and prefill-choice.ts) and the
 * figures of `stats` (router-stats.ts). Those that read the router's live parts get them
 * through one view (router-parts.ts). With `indexFeed: "engine-events"` the index follows the
 * engines' kv events instead of the router's claims and corrections (index-feed.ts).
 *
 * Edge coordination (src/core/edge) uses it twice: an isolate's replica routes with `edge`
 * hooks (edge-hooks.ts: load from the coordinator's vector, ties seeded by the request, a pick
 * among the best candidates) and applies other isolates' claims; a coordinator applies each
 * isolate's decisions with `record` and then `reroute`, `cancel` and `complete` as usual. What
 * only the edge asks (`record`, `adopt`, `drop`, the learned figures it adopts, `hottest`) sits
 * behind `seams` (replica-seams.ts), a narrower interface in its own module.
 *
 * Why about 420 lines and not 350: what is left is the protocol every holder drives (route,
 * reroute, prefillFailed, cancel, complete, ingest, firstToken, waitMs, expire, snapshot,
 * restore, stats), each method a few lines over the parts with the contract its callers rely
 * on written above it, and the settings and snapshot life cycle of those parts. Splitting the
 * protocol across files would scatter one contract; the books are already beside it.
 */
import type { EngineEvent } from "../engine-events.ts";
import { LoadBoard } from "../load-board/load-board.ts";
import { asPosition, type Slot } from "../origin-indexes.ts";
import type { RouteRequest } from "../route-request.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { applyEngineEvent } from "./apply-engine-event.ts";
import { boardOptions } from "./board-options.ts";
import { BytesPerTokenLearner, type LearnedBytesPerToken } from "./bytes-per-token.ts";
import { CapacityLearner } from "./capacity-learner.ts";
import { ClaimIndex } from "./claim-index.ts";
import { DecisionLog } from "./decision-log.ts";
import type { EdgeHooks, OriginLoad } from "./edge-hooks.ts";
import { failoverOrder } from "./failover-order.ts";
import { HotPrefixes } from "./hot-prefixes.ts";
import { OriginSlots } from "./origin-slots.ts";
import { disaggregate, servingAlone } from "./pd-decision.ts";
import { originViews, policyContext } from "./policy-context.ts";
import { PoolPolicy } from "./pool-policy.ts";
import { poolWaitMs } from "./pool-wait.ts";
import { ReplicaSeams } from "./replica-seams.ts";
import {
  ageSpeeds,
  chunkTokens,
  prefillSpeed,
  priorSpeed,
  promptTokensOf,
  type RouterParts,
  tokensPerChunk,
} from "./router-parts.ts";
import { decodeSnapshot, snapshotOf } from "./router-snapshot.ts";
import { routerStats } from "./router-stats.ts";
import type {
  FailureKind,
  Outcome,
  PrefillLeg,
  RouteDecision,
  RouterStats,
} from "./router-types.ts";
import { type LearnedSpeed, SpeedLearner } from "./speed-learner.ts";
import { TicketLegs } from "./ticket-legs.ts";

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
  readonly #policy: PoolPolicy;
  readonly #hot = new HotPrefixes();
  /**
   * The live parts, which the modules beside the router read (router-parts.ts): settings, slots,
   * index, board and learners. applySettings and restore replace the settings, the index and the
   * board in this one object, so every reader sees the current ones.
   */
  readonly #parts: { -readonly [K in keyof RouterParts]: RouterParts[K] };
  readonly #legs: TicketLegs;
  readonly #log = new DecisionLog();
  /** What edge coordination asks beyond the object's protocol (replica-seams.ts). */
  readonly seams: ReplicaSeams;
  readonly #edge: EdgeHooks | undefined;
  /** The pool has prefill or decode origins: requests get a P/D decision. */
  #disaggregated = false;

  constructor(pool: PoolSettings, options: CoreRouterOptions) {
    this.model = options.model;
    this.#policy = new PoolPolicy(options.seed ?? 1);
    // KV capacities convert tokens to chunks at the prior bytes per token (known limit:
    // docs/architecture.md); the index reads chunks as tokens at the learned one.
    const capacity = new CapacityLearner(chunkTokens(pool.chunkBytes), (slot, chunks) =>
      this.#parts.claims.setCapacity(slot, chunks),
    );
    this.#parts = {
      // Set by applySettings below: its first call finds no old settings and builds the index.
      pool: undefined as unknown as PoolSettings,
      slots: new OriginSlots(),
      claims: undefined as unknown as ClaimIndex,
      board: new LoadBoard(boardOptions(pool)),
      capacity,
      // An edge replica's board holds only its own isolate's leases: it takes its coordinator's
      // learned speeds instead of learning from its own partial queue.
      speeds: new SpeedLearner(!options.edge),
      // Its bytes per token likewise: the coordinator learns from every isolate's completions.
      bytesPerToken: new BytesPerTokenLearner(!options.edge),
    };
    this.#legs = new TicketLegs(this.#parts, options.ticketPrefix ?? "t");
    this.seams = new ReplicaSeams(this.#parts, this.#legs, this.#hot, this.#log);
    this.#edge = options.edge;
    this.applySettings(pool);
  }

  /** Tokens in one index chunk, at the pool's learned bytes per token. */
  get tokensPerChunk(): number {
    return tokensPerChunk(this.#parts);
  }

  /** A request's prompt tokens as the core estimates them (router-parts.ts `promptTokensOf`). */
  promptTokens(request: RouteRequest): number {
    return promptTokensOf(this.#parts, request);
  }

  /** The pool's bytes per token as learned (bytes-per-token.ts). */
  get bytesPerToken(): LearnedBytesPerToken {
    return this.#parts.bytesPerToken.saved();
  }

  get policyName(): string {
    return this.#policy.name;
  }

  /** Take new pool settings; state of origins that stay is kept. Settings arrive validated. */
  applySettings(pool: PoolSettings): void {
    const old = this.#parts.pool as PoolSettings | undefined;
    this.#parts.pool = pool;
    this.#parts.board.options = boardOptions(pool);
    if (old?.chunkBytes !== pool.chunkBytes || old.indexFeed !== pool.indexFeed) {
      // Hashes of another chunk size name other prefixes, and another feed other claims: the
      // old index is meaningless.
      this.#parts.claims = this.#newIndex();
      this.#hot.clear();
      this.#parts.capacity.reindex(chunkTokens(pool.chunkBytes));
    } else if (old.indexMaxChunks !== pool.indexMaxChunks) {
      // A new budget alone keeps what the index holds: rebuilt from its own snapshot in arrays
      // sized to it, least recently used chunks evicted down to the budget (an isolate's
      // budget split across its edge pools changes as pools come: replica-registry.ts).
      const { claims } = this.#parts;
      this.#parts.claims = new ClaimIndex(
        this.tokensPerChunk,
        pool.indexMaxChunks,
        pool.indexFeed,
        claims.snapshot(),
      );
    }
    this.#policy.configure(pool.policy, pool.shadowPolicies);
    this.#disaggregated = pool.origins.some((o) => o.role !== "both");
    for (const slot of this.#parts.slots.sync(pool.origins)) this.#clear(slot);
    this.#configureOrigins();
  }

  /**
   * Each origin's prefill speed prior and capacity from settings (a no-op where nothing
   * changed); the board drains at the speed learned, else the prior.
   */
  #configureOrigins(): void {
    for (const slot of this.#parts.slots.order) {
      const { settings } = this.#parts.slots.at(slot);
      this.#parts.speeds.configure(slot, priorSpeed(this.#parts, slot));
      this.#parts.board.ensure(slot, prefillSpeed(this.#parts, slot));
      this.#parts.capacity.configure(
        slot,
        settings.kvCapacityTokens ?? this.#parts.pool.kvCapacityTokens,
      );
    }
  }

  /** The origin in `slot` left: forget what is filed under the slot before another takes it. */
  #clear(slot: Slot): void {
    this.#parts.claims.forget(slot);
    this.#parts.board.remove(slot);
    this.#parts.capacity.forget(slot);
    this.#parts.speeds.forget(slot);
    this.#legs.dropSlot(slot);
  }

  /**
   * Match the hashes, let the policy decide over the load board's view, then lease the request
   * to the origin and claim the prompt for it in the index, so the next request with this
   * prefix sees it at once (claim-index.ts). No origin eligible: no ticket, and the reason.
   * In a pool with prefill or decode origins the policy's choice is the decode origin (prefill
   * origins are eligible to it only to serve the request whole: policy-context.ts);
   * pd-decision.ts then says whether a prefill origin prefills, and that origin is leased and
   * claimed too.
   */
  route(asked: RouteRequest, now: number): RouteDecision {
    this.expire(now);
    const promptTokens = promptTokensOf(this.#parts, asked);
    const request = promptTokens === asked.promptTokens ? asked : { ...asked, promptTokens };
    const { chunkHashes: hashes } = request;
    this.#parts.claims.match(hashes);
    this.#hot.observe(hashes, now);
    const rng = this.#policy.rng;
    const edge = this.#edge;
    const context = policyContext(this.#parts, request, rng, now, edge);
    if (edge) this.#policy.reseed(edge.seed(context));
    const policyDecision = this.#policy.decide(context);
    const {
      origin: decided,
      reason,
      ranking,
    } = edge ? edge.pick(context, policyDecision) : policyDecision;
    const policy = this.#policy.name;
    if (decided < 0) return this.#unrouted(policy, reason, promptTokens, now);
    // A policy's decision indexes its context's origins: a position in the settings order.
    const chosen = asPosition(decided);
    const slot = this.#parts.slots.slotAt(chosen);
    const pd = this.#disaggregated ? disaggregate(this.#parts, request, slot, rng, now) : null;
    const prefillSlot = pd?.prefill?.slot ?? null;
    const ticket = this.#legs.issue();
    const claim = this.#legs.lease(
      ticket,
      hashes,
      slot,
      promptTokens,
      prefillSlot,
      now,
      request.promptBytes,
    );
    const { matchedTokens } = claim;
    const origin = this.#parts.slots.at(slot).settings.id;
    const prefill: PrefillLeg | null = pd?.prefill
      ? {
          origin: this.#parts.slots.at(pd.prefill.slot).settings.id,
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
    const budget = this.#parts.pool.retry.maxAttempts - 1;
    const views = this.#disaggregated
      ? servingAlone(this.#parts, context.origins)
      : context.origins;
    const alternates = failoverOrder(views, chosen, ranking, budget);
    return { origin, alternates, matchedTokens, policy, reason, ticket, pdReason, prefill };
  }

  /** No origin is eligible: no ticket, and the policy's reason. */
  #unrouted(policy: string, reason: string, promptTokens: number, now: number): RouteDecision {
    const none = { origin: null, matchedTokens: 0, pdReason: null };
    this.#log.record({ ...none, at: now, reason, promptTokens, prefillOrigin: null });
    return { ...none, alternates: [], policy, reason, ticket: null, prefill: null };
  }

  /**
   * `originId`'s prefill speed as another router learned it, or a snapshot held it
   * (replica-seams.ts `adoptSpeed`); on the router too, as holders and tests seed speeds so.
   */
  adoptSpeed(originId: string, learned: LearnedSpeed, now: number): void {
    this.seams.adoptSpeed(originId, learned, now);
  }

  /** `originId`'s prefill speed as routing reads it (learned, else its prior); null if unknown. */
  prefillSpeed(originId: string): number | null {
    const slot = this.#parts.slots.slotOf(originId);
    return slot === undefined ? null : prefillSpeed(this.#parts, slot);
  }

  /** Each origin's load as this router reads it, in settings order, with its capacity. */
  loads(now: number): OriginLoad[] {
    ageSpeeds(this.#parts, now);
    return this.seams.loads(now);
  }

  /**
   * The ticket's origin failed before its first byte; `next` will be tried instead, alone: the
   * failed leg is undone and blamed, a prefill leg ends unblamed (the decode that was to take
   * its KV is gone), and `next` is leased and claimed as `route` does. Returns the prompt tokens
   * `next` is believed to hold, or null for an unknown ticket or origin, or a prefill origin as
   * `next`.
   */
  reroute(ticket: string, failure: FailureKind, next: string, now: number): number | null {
    const t = this.#legs.get(ticket);
    const nextSlot = this.#parts.slots.slotOf(next);
    if (!t || nextSlot === undefined || this.#parts.slots.at(nextSlot).settings.role === "prefill")
      return null;
    const promptTokens = this.#legs.failDecode(ticket, t, failure, now);
    const { hashes } = t.claim;
    this.#parts.claims.match(hashes);
    return this.#legs.lease(ticket, hashes, nextSlot, promptTokens, null, now).matchedTokens;
  }

  /**
   * The ticket's prefill leg failed (not a 4xx: the request itself is fine); the decode origin
   * will serve it alone. The prefill origin's claim is taken back and the failure counted
   * against it; the prompt's prefill work moves to the decode origin. Returns the prompt tokens
   * the decode origin is believed to hold, or null for an unknown ticket or one with no prefill
   * leg.
   */
  prefillFailed(ticket: string, failure: FailureKind, now: number): number | null {
    return this.#legs.failPrefill(ticket, failure, now)?.matchedTokens ?? null;
  }

  /**
   * The ticket will not be used (e.g. a decision that arrived after the Worker stopped waiting):
   * release it as if it had never been routed, blaming no origin. False for an unknown ticket.
   */
  cancel(ticket: string, now: number): boolean {
    return this.#legs.abandon(ticket, now);
  }

  /**
   * The request ended: its legs are settled by the outcome (ticket-legs.ts), a failure blamed on
   * the leg that failed, capacity learned from whichever origin prefilled. Returns false for an
   * unknown (expired or foreign) ticket.
   */
  complete(ticket: string, outcome: Outcome, now: number): boolean {
    return this.#legs.settle(ticket, outcome, now);
  }

  /** Apply a batch of engine events for one origin. False if the origin is unknown. */
  ingest(originId: string, events: readonly EngineEvent[], now: number): boolean {
    const slot = this.#parts.slots.slotOf(originId);
    if (slot === undefined) return false;
    for (const event of events) applyEngineEvent(this.#parts, slot, event, now);
    return true;
  }

  /**
   * The ticket's first token came back: its prefill is done (prefilling tokens, queued prefill).
   * The Worker does not call it (one more call to the object per request); the simulator does
   * for policies whose real system streams the tokens through its router (Dynamo). A live
   * prefill leg is done too: the decode origin's first token needed its KV.
   */
  firstToken(ticket: string, now: number): boolean {
    return this.#legs.firstToken(ticket, now);
  }

  /**
   * How long a request would wait at the pool's best origin before its prefill starts, in ms
   * (pool-wait.ts): what admission (src/core/admission) gates on; an edge replica's reads the
   * load its policy reads (its coordinator's vector plus its own leases). `meanWork` costs each request
   * an engine reports waiting beyond this router's own.
   */
  waitMs(now: number, meanWork: number): number {
    this.expire(now);
    return poolWaitMs(originViews(this.#parts, now, this.#edge), meanWork);
  }

  /** Requests routed and not yet completed, cancelled or expired. */
  get outstanding(): number {
    return this.#legs.size;
  }

  /**
   * Release leases whose completion never came, and age learned speeds (router-parts.ts
   * `ageSpeeds`). Returns how many requests that ended.
   */
  expire(now: number): number {
    ageSpeeds(this.#parts, now);
    return this.#legs.expire(now);
  }

  /** The index and what it needs to be read back (origin ids by slot, capacities, speeds). */
  snapshot(): Uint8Array {
    return snapshotOf(this.#parts);
  }

  /**
   * The index for the current settings (from a snapshot's). An edge replica's takes nothing
   * back itself: its coordinator logs what a failed, rerouted or cancelled claim took back, and
   * the replica applies that in the log's order (core/edge/delta-log.ts). Taking back its own
   * copy too would truncate what other isolates' claims, heard since, made the origin hold.
   */
  #newIndex(snapshot?: Uint8Array): ClaimIndex {
    const { indexMaxChunks, indexFeed } = this.#parts.pool;
    const index = new ClaimIndex(this.tokensPerChunk, indexMaxChunks, indexFeed, snapshot);
    index.unclaims = this.#edge === undefined;
    return index;
  }

  /**
   * Start from a snapshot (before any traffic): the index and each origin's slot, learned
   * capacity and learned prefill speed come back; origins no longer in settings are dropped, new ones get free slots.
   * A snapshot taken with another chunk size names other prefixes and is ignored.
   */
  restore(bytes: Uint8Array): void {
    const { header, index } = decodeSnapshot(bytes);
    if (header.chunkBytes !== this.#parts.pool.chunkBytes) return;
    if (header.bytesPerToken) this.#parts.bytesPerToken.adopt(header.bytesPerToken);
    this.#parts.claims = this.#newIndex(index);
    this.#parts.board = new LoadBoard(boardOptions(this.#parts.pool));
    this.#legs.clear();
    this.#parts.capacity.restore(header.slots);
    for (const slot of this.#parts.slots.restore(header.slots, this.#parts.pool.origins))
      this.#clear(slot);
    this.#configureOrigins();
    for (const { id, speed } of header.slots) if (speed) this.seams.adoptSpeed(id, speed, 0);
  }

  stats(now: number): RouterStats {
    ageSpeeds(this.#parts, now);
    const parts = { model: this.model, policy: this.#policy, log: this.#log, legs: this.#legs };
    return routerStats(this.#parts, { ...parts, hot: this.#hot }, now);
  }

  /** Test-only: throws if a part's or the index's invariants are broken. O(size). */
  checkInvariants(): void {
    this.#parts.claims.checkInvariants();
    this.#parts.slots.checkInvariants(this.#parts.pool.origins);
    this.#legs.checkInvariants();
    this.#parts.capacity.checkInvariants(this.#parts.slots.order, (slot) =>
      this.#parts.claims.capacityChunks(slot),
    );
  }
}
