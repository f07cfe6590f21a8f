/**
 * The core router of one pool: the radix index, the load board and the pool's policy tied
 * together. It is the whole routing brain; the Durable Object only holds one and persists its
 * snapshot, the Worker's fallback holds one with `prefix-hash`, and the simulator drives one
 * directly. It never reads the clock (`now` is passed in, milliseconds) or a global random source.
 *
 * route:    match the hashes, let the policy decide over the load board's view, then count the
 *           request against the origin (a lease) and record in the index that the origin will
 *           hold the prompt once it has prefilled it (as SGLang's tree and Dynamo's approximate
 *           mode do), so the next request with this prefix sees it at once.
 * reroute:  the origin failed before its first byte; undo the speculative ownership, count the
 *           failure, move the lease to the alternate that is tried next.
 * complete: release the lease; a failure undoes the speculative ownership; engine truth
 *           (cached tokens) corrects the origin's effective capacity: a prefix the index thought
 *           cached but the engine had evicted means the engine keeps less than the index assumes
 *           (its KV also holds running requests), so capacity shrinks by 5%; confirmed hits let it
 *           grow back towards the configured or reported size.
 * With `indexFeed: "engine-events"` the index follows the engines' kv events instead of these
 * claims and corrections (index-feed.ts).
 */
import { BYTES_PER_TOKEN } from "../chunk-hash.ts";
import type { EngineEvent } from "../engine-events.ts";
import { LoadBoard } from "../load-board/load-board.ts";
import { createPolicy, usesActiveChunks } from "../policies/index.ts";
import type { OriginView, Policy } from "../policies/policy.ts";
import { prefillWork } from "../prefill-work.ts";
import { RadixIndex } from "../radix-index/radix-index.ts";
import { createRng, type Rng } from "../rng.ts";
import type { OriginSettings, PoolSettings } from "../settings/settings-schema.ts";
import { DecisionLog } from "./decision-log.ts";
import { HotPrefixes } from "./hot-prefixes.ts";
import { applyKvEvent, claimsOnRoute } from "./index-feed.ts";
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

export const MAX_ORIGINS = 256;
const SHRINK_ON_MISS = 0.95;
const MIN_CAPACITY_FRACTION = 0.1;
/** Hot prefixes listed by `stats`. */
const HOT_PREFIXES_SHOWN = 10;

export interface CoreRouterOptions {
  model: string;
  /** Seed of the policy's random source (tie-breaks, random, power-of-two). */
  seed?: number;
  /** Makes tickets unique across restarts of the holder (e.g. a random id per object start). */
  ticketPrefix?: string;
}

interface Slot {
  settings: OriginSettings;
  /** Capacity in tokens from an engine report, which overrides settings. */
  reportedTokens: number | null;
  /** Capacity from settings or report, in chunks. */
  configuredChunks: number;
  /** Capacity the index currently enforces, in chunks (shrinks on misses, regrows on hits). */
  effectiveChunks: number;
  routed: number;
}

interface Pending {
  readonly hashes: ArrayLike<number>;
  slot: number;
  matchedChunks: number;
  matchedTokens: number;
}

export class CoreRouter {
  readonly model: string;
  #pool!: PoolSettings;
  #policy!: Policy;
  #policyKey = "";
  #rng: Rng;
  #seed: number;
  #shadows = new ShadowEvaluation();
  #hot = new HotPrefixes();
  #index!: RadixIndex;
  #board: LoadBoard;
  #slots: (Slot | undefined)[] = [];
  #order: number[] = [];
  #slotOf = new Map<string, number>();
  #pending = new Map<string, Pending>();
  #log = new DecisionLog();
  #accuracy = { reports: 0, predictedTokens: 0, cachedTokens: 0, promptTokens: 0 };
  #failures: Partial<Record<FailureKind, number>> = {};
  #ticketPrefix: string;
  #tickets = 0;
  #matched = new Int32Array(MAX_ORIGINS);

  constructor(pool: PoolSettings, options: CoreRouterOptions) {
    this.model = options.model;
    this.#seed = options.seed ?? 1;
    this.#rng = createRng(this.#seed);
    this.#ticketPrefix = options.ticketPrefix ?? "t";
    this.#board = new LoadBoard(boardOptions(pool));
    this.applySettings(pool);
  }

  get tokensPerChunk(): number {
    return this.#pool.chunkBytes / BYTES_PER_TOKEN;
  }

  get policyName(): string {
    return this.#policy.name;
  }

  /** Take new pool settings; state of origins that stay is kept. Settings arrive validated. */
  applySettings(pool: PoolSettings): void {
    const rechunked = !this.#pool || this.#pool.chunkBytes !== pool.chunkBytes;
    const resized =
      !this.#pool ||
      this.#pool.indexMaxChunks !== pool.indexMaxChunks ||
      this.#pool.indexFeed !== pool.indexFeed;
    this.#pool = pool;
    this.#board.options = boardOptions(pool);
    if (rechunked || resized) {
      // Hashes of another chunk size name other prefixes: the old index is meaningless.
      this.#index = new RadixIndex({ maxOrigins: MAX_ORIGINS, maxChunks: pool.indexMaxChunks });
      this.#hot.clear();
      for (const s of this.#slots) if (s) s.configuredChunks = 0;
    }
    this.#shadows.configure(pool.shadowPolicies, this.#seed);
    const policyKey = JSON.stringify(pool.policy);
    if (policyKey !== this.#policyKey) {
      this.#policy = createPolicy(pool.policy);
      this.#policyKey = policyKey;
    }
    const keep = new Set(pool.origins.map((o) => o.id));
    for (const [id, slot] of this.#slotOf) {
      if (keep.has(id)) continue;
      this.#index.removeOrigin(slot);
      this.#board.remove(slot);
      this.#slots[slot] = undefined;
      this.#slotOf.delete(id);
    }
    this.#order = pool.origins.map((settings) => {
      let slot = this.#slotOf.get(settings.id);
      if (slot === undefined) {
        slot = this.#slots.indexOf(undefined);
        if (slot < 0) slot = this.#slots.length;
        this.#slots[slot] = {
          settings,
          reportedTokens: null,
          configuredChunks: 0,
          effectiveChunks: 0,
          routed: 0,
        };
        this.#slotOf.set(settings.id, slot);
      }
      const s = this.#slots[slot] as Slot;
      s.settings = settings;
      this.#board.ensure(slot, settings.prefillTokensPerSecond ?? pool.prefillTokensPerSecond);
      this.#configure(slot);
      return slot;
    });
  }

  /** Recompute an origin's configured capacity; a change resets what was learned. */
  #configure(slot: number): void {
    const s = this.#slots[slot] as Slot;
    const tokens = s.reportedTokens ?? s.settings.kvCapacityTokens ?? this.#pool.kvCapacityTokens;
    const chunks = Math.max(1, Math.floor(tokens / this.tokensPerChunk));
    if (chunks === s.configuredChunks) return;
    s.configuredChunks = chunks;
    this.#setCapacity(slot, chunks);
  }

  #setCapacity(slot: number, chunks: number): void {
    const s = this.#slots[slot] as Slot;
    s.effectiveChunks = chunks;
    this.#index.setCapacity(slot, chunks);
  }

  #views(now: number): OriginView[] {
    return this.#order.map((slot) => {
      const s = this.#slots[slot] as Slot;
      const v = this.#board.view(slot, now);
      return {
        id: s.settings.id,
        eligible: v.eligible,
        outstanding: v.outstanding,
        queuedPrefillTokens: v.queuedPrefillTokens,
        activeTokens: v.activeTokens,
        prefillingTokens: v.prefillingTokens,
        activeChunks: v.activeChunks ?? v.activeTokens / this.tokensPerChunk,
        indexedTokens: this.#index.owned(slot) * this.tokensPerChunk,
        engine: v.engine,
        prefillTokensPerSecond:
          s.settings.prefillTokensPerSecond ?? this.#pool.prefillTokensPerSecond,
        weight: s.settings.weight,
      };
    });
  }

  #matchedTokens(chunks: number, promptTokens: number): number {
    return Math.min(chunks * this.tokensPerChunk, promptTokens);
  }

  route(request: RouteRequest, now: number): RouteDecision {
    this.expire(now);
    const hashes = request.chunkHashes;
    this.#index.match(hashes, this.#matched);
    this.#hot.observe(hashes, now);
    const matchedTokens = this.#order.map((slot) =>
      this.#matchedTokens(this.#matched[slot] as number, request.promptTokens),
    );
    const origins = this.#views(now);
    const context = {
      request,
      origins,
      matchedTokens,
      tokensPerChunk: this.tokensPerChunk,
      attentionTokens: this.#pool.prefillAttentionTokens,
      hotTokens: (minHeat: number) =>
        Math.min(
          request.promptTokens,
          this.#index.hotDepth(hashes, now, minHeat) * this.tokensPerChunk,
        ),
      addedChunks: (i: number) =>
        this.#board.addedChunks(
          this.#order[i] as number,
          hashes,
          request.promptTokens > hashes.length * this.tokensPerChunk,
        ),
      now,
      rng: this.#rng,
    };
    const decision = this.#policy.decide(context);
    const chosen = decision.origin;
    if (this.#shadows.size > 0) this.#shadows.observe(context, chosen);
    if (chosen < 0) {
      this.#log.record({
        at: now,
        origin: null,
        reason: decision.reason,
        matchedTokens: 0,
        promptTokens: request.promptTokens,
      });
      return {
        origin: null,
        alternates: [],
        matchedTokens: 0,
        policy: this.#policy.name,
        reason: decision.reason,
        ticket: null,
      };
    }
    const slot = this.#order[chosen] as number;
    const ticket = `${this.#ticketPrefix}${(this.#tickets++).toString(36)}`;
    const pending = {
      hashes,
      slot,
      matchedChunks: this.#matched[slot] as number,
      matchedTokens: matchedTokens[chosen] as number,
    };
    this.#lease(ticket, pending, request.promptTokens, now);
    const origin = origins[chosen]?.id as string;
    this.#log.record({
      at: now,
      origin,
      reason: decision.reason,
      matchedTokens: pending.matchedTokens,
      promptTokens: request.promptTokens,
    });
    return {
      origin,
      alternates: this.#alternates(origins, chosen, decision.ranking),
      matchedTokens: pending.matchedTokens,
      policy: this.#policy.name,
      reason: decision.reason,
      ticket,
    };
  }

  #lease(ticket: string, pending: Pending, promptTokens: number, now: number): void {
    const work = prefillWork(
      pending.matchedTokens,
      promptTokens,
      this.#pool.prefillAttentionTokens,
    );
    this.#board.lease(ticket, pending.slot, promptTokens, work, now, {
      uncachedTokens: promptTokens - pending.matchedTokens,
      hashes: pending.hashes,
      partial: promptTokens > pending.hashes.length * this.tokensPerChunk,
    });
    if (claimsOnRoute(this.#pool.indexFeed)) this.#index.insert(pending.hashes, pending.slot, now);
    (this.#slots[pending.slot] as Slot).routed++;
    this.#pending.set(ticket, pending);
  }

  /**
   * Failover order, as many as the retry budget can use: the policy's ranking, then the other
   * eligible origins with the fewest requests in flight.
   */
  #alternates(
    origins: readonly OriginView[],
    chosen: number,
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
    const pending = this.#pending.get(ticket);
    const nextSlot = this.#slotOf.get(next);
    if (!pending || nextSlot === undefined) return null;
    const promptTokens = this.#board.release(ticket, false, now)?.promptTokens ?? 0;
    this.#unclaim(pending);
    this.#onFailure(pending.slot, failure, now);
    this.#index.match(pending.hashes, this.#matched);
    const matchedChunks = this.#matched[nextSlot] as number;
    const matchedTokens = this.#matchedTokens(matchedChunks, promptTokens);
    this.#lease(
      ticket,
      { hashes: pending.hashes, slot: nextSlot, matchedChunks, matchedTokens },
      promptTokens,
      now,
    );
    return matchedTokens;
  }

  /**
   * The ticket will not be used (e.g. a decision that arrived after the Worker stopped waiting):
   * release it as if it had never been routed, blaming no origin. False for an unknown ticket.
   */
  cancel(ticket: string, now: number): boolean {
    const pending = this.#pending.get(ticket);
    if (!pending) return false;
    this.#pending.delete(ticket);
    this.#board.release(ticket, false, now);
    this.#board.onAbandon(pending.slot);
    this.#unclaim(pending);
    return true;
  }

  #onFailure(slot: number, kind: FailureKind, now: number): void {
    this.#failures[kind] = (this.#failures[kind] ?? 0) + 1;
    this.#board.onFailure(slot, now);
  }

  /** The origin never prefilled the prompt: take back what route() assumed it would hold. */
  #unclaim(pending: Pending): void {
    if (!claimsOnRoute(this.#pool.indexFeed)) return;
    this.#index.truncate(pending.hashes, pending.slot, pending.matchedChunks);
  }

  /** The request ended. Returns false for an unknown (expired or foreign) ticket. */
  complete(ticket: string, outcome: Outcome, now: number): boolean {
    const pending = this.#pending.get(ticket);
    if (!pending) return false;
    this.#pending.delete(ticket);
    const beforeFirstByte =
      !outcome.ok && outcome.failure !== undefined && outcome.failure !== "stream";
    this.#board.release(ticket, !beforeFirstByte, now);
    if (beforeFirstByte) this.#unclaim(pending);
    if (outcome.failure !== undefined) this.#onFailure(pending.slot, outcome.failure, now);
    if (outcome.ok) {
      this.#board.onSuccess(pending.slot);
      if (outcome.cachedTokens !== undefined) this.#learn(pending, outcome);
    } else if (outcome.failure === undefined) {
      // Neither success nor the origin's fault (client left, 4xx): a half-open probe that ends
      // this way proves nothing, so the next request may probe.
      this.#board.onAbandon(pending.slot);
    }
    return true;
  }

  #learn(pending: Pending, outcome: Outcome): void {
    const cached = outcome.cachedTokens ?? 0;
    const a = this.#accuracy;
    a.reports++;
    a.predictedTokens += pending.matchedTokens;
    a.cachedTokens += cached;
    a.promptTokens += outcome.promptTokens ?? 0;
    const s = this.#slots[pending.slot];
    if (!s || !claimsOnRoute(this.#pool.indexFeed)) return;
    const configured = s.configuredChunks;
    if (cached + this.tokensPerChunk < pending.matchedTokens) {
      const floor = Math.ceil(configured * MIN_CAPACITY_FRACTION);
      this.#setCapacity(
        pending.slot,
        Math.max(floor, Math.floor(s.effectiveChunks * SHRINK_ON_MISS)),
      );
    } else if (pending.matchedChunks > 0 && s.effectiveChunks < configured) {
      this.#setCapacity(
        pending.slot,
        Math.min(configured, s.effectiveChunks + pending.matchedChunks),
      );
    }
  }

  /** Apply a batch of engine events for one origin. False if the origin is unknown. */
  ingest(originId: string, events: readonly EngineEvent[], now: number): boolean {
    const slot = this.#slotOf.get(originId);
    if (slot === undefined) return false;
    const s = this.#slots[slot] as Slot;
    for (const event of events) {
      switch (event.type) {
        case "load":
          this.#board.report(slot, event, now);
          break;
        case "capacity":
          s.reportedTokens = event.kvCapacityTokens;
          this.#configure(slot);
          break;
        case "cache-reset":
          this.#index.removeOrigin(slot);
          break;
        case "health":
          this.#board.setHealth(slot, event.status);
          break;
        case "kv-stored":
        case "kv-removed":
          applyKvEvent(this.#index, this.#pool.indexFeed, slot, event, now);
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
    for (const lease of expired) this.#pending.delete(lease.ticket);
    return expired.length;
  }

  /** The index and what it needs to be read back (origin ids by slot, capacities). */
  snapshot(): Uint8Array {
    const slots = this.#order.map((slot) => {
      const s = this.#slots[slot] as Slot;
      const { reportedTokens, configuredChunks, effectiveChunks } = s;
      return { slot, id: s.settings.id, reportedTokens, configuredChunks, effectiveChunks };
    });
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
    this.#pending.clear();
    this.#slots = [];
    this.#slotOf.clear();
    for (const saved of header.slots) {
      const settings = this.#pool.origins.find((o) => o.id === saved.id) ?? {
        id: saved.id,
        url: "",
        role: "both",
        weight: 1,
      };
      const { reportedTokens, configuredChunks, effectiveChunks } = saved;
      this.#slots[saved.slot] = {
        settings,
        reportedTokens,
        configuredChunks,
        effectiveChunks,
        routed: 0,
      };
      this.#slotOf.set(saved.id, saved.slot);
    }
    this.applySettings(this.#pool);
    for (const slot of this.#order) {
      const s = this.#slots[slot] as Slot;
      this.#setCapacity(
        slot,
        Math.min(s.effectiveChunks || s.configuredChunks, s.configuredChunks),
      );
    }
  }

  stats(now: number): RouterStats {
    const origins: OriginStats[] = this.#order.map((slot) => {
      const s = this.#slots[slot] as Slot;
      const v = this.#board.view(slot, now);
      return {
        id: s.settings.id,
        url: s.settings.url,
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
        capacityTokens: s.effectiveChunks * this.tokensPerChunk,
        routed: s.routed,
      };
    });
    const { chunks, nodes, ownerships, bytes } = this.#index.stats();
    return {
      model: this.model,
      policy: this.#policy.name,
      origins,
      index: { chunks, nodes, ownerships, bytes },
      decisions: { total: this.#log.total, byReason: { ...this.#log.byReason } },
      accuracy: { ...this.#accuracy },
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
      const origins = this.#order
        .filter((slot) => (this.#matched[slot] as number) >= p.depth)
        .map((slot) => (this.#slots[slot] as Slot).settings.id);
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
}

function boardOptions(pool: PoolSettings) {
  return {
    leaseMs: pool.leaseMs,
    failureThreshold: pool.circuit.failureThreshold,
    cooldownMs: pool.circuit.cooldownMs,
    reportFreshMs: pool.reportFreshMs,
    reportStaleMs: pool.reportStaleMs,
    trackActiveChunks: usesActiveChunks(pool),
  };
}
