/**
 * The root of an edge-coordinated pool (docs/architecture.md, "Scale: two coordination
 * modes"): it takes the engines' webhooks and merges the coordinators' load. Each coordinator
 * reports its group's share of every origin's load every `rootIntervalMs` and hears back the
 * sum of the other groups' last shares (a share older than three intervals counts no more: its
 * coordinator is gone or cut off), their decision rate and the latest state of every engine.
 *
 * Engine state is the latest, never a log: the last load report and measured prefill speed
 * (numbered, so a coordinator applies each once), health, reported capacity and a count of cache resets (a rise tells a
 * coordinator to forget that origin). So an exchange is idempotent, a lost answer costs
 * nothing but delay, and a restarted root (a new epoch) is taken as it is. Which webhook
 * batches to apply (each once, none older than the last) stays the caller's, as in object mode
 * (batch-ledger.ts). O(coordinators x origins) per exchange.
 */
import type { EngineEvent, Health, LoadReport } from "../engine-events.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";
import { addRates } from "./decayed-rate.ts";
import type { EngineState, LoadShare, PoolRate, RootAnswer, RootReport } from "./sync-protocol.ts";

/** A coordinator's share counts for this many root intervals after its report. */
const SHARE_LIFE_INTERVALS = 3;

interface Engine {
  load: (LoadReport & { seq: number; at: number }) | null;
  prefillRate: { seq: number; tokensPerSecond: number; tokens: number; at: number } | null;
  health: Health;
  capacityTokens: number | null;
  resets: number;
}

interface Share {
  readonly loads: readonly LoadShare[];
  readonly rate: PoolRate;
  readonly at: number;
}

export class EdgeRoot {
  readonly epoch: string;
  #pool: PoolSettings;
  readonly #engines = new Map<string, Engine>();
  readonly #shares = new Map<string, Share>();
  #seq = 0;

  constructor(pool: PoolSettings, options: { epoch: string }) {
    this.epoch = options.epoch;
    this.#pool = pool;
  }

  applySettings(pool: PoolSettings): void {
    this.#pool = pool;
  }

  /** A webhook batch's events for one origin. False for an origin not in settings. */
  ingest(originId: string, events: readonly EngineEvent[], now: number): boolean {
    if (!this.#pool.origins.some((o) => o.id === originId)) return false;
    let e = this.#engines.get(originId);
    if (!e) {
      e = { load: null, prefillRate: null, health: "up", capacityTokens: null, resets: 0 };
      this.#engines.set(originId, e);
    }
    for (const event of events) {
      switch (event.type) {
        case "load": {
          const { running, waiting, kvUsage } = event;
          e.load = { seq: ++this.#seq, running, waiting, kvUsage, at: now };
          break;
        }
        case "prefill-rate": {
          const { tokensPerSecond, tokens } = event;
          e.prefillRate = { seq: ++this.#seq, tokensPerSecond, tokens, at: now };
          break;
        }
        case "health":
          e.health = event.status;
          break;
        case "capacity":
          e.capacityTokens = event.kvCapacityTokens;
          break;
        case "cache-reset":
          e.resets++;
          break;
        default:
          // kv events: an edge pool's index follows decisions (edge-settings.ts refuses the feed).
          break;
      }
    }
    return true;
  }

  exchange(report: RootReport, now: number): RootAnswer {
    this.#shares.set(report.coordinator, { loads: report.loads, rate: report.rate, at: now });
    const life = SHARE_LIFE_INTERVALS * this.#pool.edge.rootIntervalMs;
    const sums = new Map<string, LoadShare>();
    let rate: PoolRate = { requestsPerSecond: 0, meanPrefillWork: 0 };
    for (const [coordinator, share] of this.#shares) {
      if (now - share.at > life) {
        this.#shares.delete(coordinator);
        continue;
      }
      if (coordinator === report.coordinator) continue;
      rate = addRates(rate, share.rate);
      for (const l of share.loads) sums.set(l.id, addShares(sums.get(l.id), l));
    }
    const engines: EngineState[] = [];
    for (const o of this.#pool.origins) {
      const e = this.#engines.get(o.id);
      if (!e) continue;
      const load = e.load && {
        seq: e.load.seq,
        running: e.load.running,
        waiting: e.load.waiting,
        kvUsage: e.load.kvUsage,
        ageMs: now - e.load.at,
      };
      const rate = e.prefillRate;
      engines.push({
        id: o.id,
        load,
        prefillRate: rate && {
          seq: rate.seq,
          tokensPerSecond: rate.tokensPerSecond,
          tokens: rate.tokens,
          ageMs: now - rate.at,
        },
        health: e.health,
        capacityTokens: e.capacityTokens,
        resets: e.resets,
      });
    }
    return { epoch: this.epoch, others: [...sums.values()], rate, engines };
  }
}

function addShares(a: LoadShare | undefined, b: LoadShare): LoadShare {
  if (!a) return b;
  return {
    id: a.id,
    outstanding: a.outstanding + b.outstanding,
    activeTokens: a.activeTokens + b.activeTokens,
    prefillingTokens: a.prefillingTokens + b.prefillingTokens,
    queuedPrefillTokens: a.queuedPrefillTokens + b.queuedPrefillTokens,
  };
}
