/**
 * Engine webhook events: what an engine (or the reporter beside it) tells the router. The Worker
 * validates a batch with `engineEventBatch` and the core applies it with `CoreRouter.ingest`.
 *
 * - load:        running and waiting requests and KV usage in [0, 1] (vLLM's
 *                num_requests_running / num_requests_waiting / kv_cache_usage_perc).
 * - capacity:    KV cache size in tokens; sets the origin's capacity in the index.
 * - cache-reset: the engine restarted or cleared its prefix cache; the index forgets the origin.
 * - health:      up, draining (finish what runs, take nothing new) or down.
 * - kv-stored:   the engine cached full blocks: `hashes`, a run whose first block follows the
 *                block named `parent` (null: the run starts the prompt). vLLM's BlockStored.
 * - kv-removed:  the engine evicted the blocks named `hashes`. vLLM's BlockRemoved
 *                (AllBlocksCleared is `cache-reset`).
 * - prefill-rate: the engine's measured prefill speed: `tokens` prompt tokens it prefilled
 *                (cache hits excluded) since the last such event, at `tokensPerSecond`
 *                (llama.cpp's prompt_tokens_total / prompt_seconds_total counters, differenced
 *                by the reporter). Kept per origin with its age; the speed learner weighs it.
 * The kv events name blocks by the router's own chunk hashes (chunk-hash.ts), so they feed the
 * index only of a pool whose `indexFeed` is "engine-events" (router/index-feed.ts); a real
 * engine names blocks by hashes of token ids, which the router cannot compute at the edge, so
 * today only the simulator's engines send them (docs/architecture.md, "Index feed").
 *
 * A batch carries its own `id` and the time it was made (`at`) inside the signed body, so the
 * pool can tell a replay or a late copy from a new report (`batch-ledger.ts`).
 */
import { z } from "zod";

/**
 * How far from the router's clock a batch's `at`, and its signature's timestamp, may be: 5
 * minutes, Stripe's default tolerance. Past it a batch is refused outright, which is what lets
 * the pool forget the ids of older batches.
 */
export const BATCH_WINDOW_MS = 300_000;

/**
 * How far ahead of the router's clock a batch's `at` may be: 5 s, clock skew between machines
 * that keep time (NTP keeps them within milliseconds). A pool orders an origin's batches by `at`,
 * so a batch made ahead holds off that origin's later batches until the router's clock passes
 * it; the bound caps that at 5 s, less than a load report's fresh time (`reportFreshMs`, 5 s by
 * default), so a batch made ahead can no longer lock an origin's reports out.
 */
export const BATCH_AHEAD_MS = 5_000;

/** Block hashes one kv event may carry: a batch of them stays within the webhook's 64 KB. */
export const MAX_KV_HASHES = 1024;

const chunkHash = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const chunkHashes = z.array(chunkHash).min(1).max(MAX_KV_HASHES);

export const engineEvent = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("load"),
      running: z.number().int().min(0).max(1e6),
      waiting: z.number().int().min(0).max(1e6),
      kvUsage: z.number().min(0).max(1),
    })
    .strict(),
  z
    .object({ type: z.literal("capacity"), kvCapacityTokens: z.number().int().min(1).max(1e9) })
    .strict(),
  z.object({ type: z.literal("cache-reset") }).strict(),
  z.object({ type: z.literal("health"), status: z.enum(["up", "draining", "down"]) }).strict(),
  z
    .object({ type: z.literal("kv-stored"), parent: chunkHash.nullable(), hashes: chunkHashes })
    .strict(),
  z.object({ type: z.literal("kv-removed"), hashes: chunkHashes }).strict(),
  z
    .object({
      type: z.literal("prefill-rate"),
      tokensPerSecond: z.number().positive().max(1e9),
      tokens: z.number().int().min(1).max(1e12),
    })
    .strict(),
]);

export const engineEventBatch = z
  .object({
    origin: z.string().min(1).max(64),
    /** Unique per batch (the reporter sends a UUID); a retry of the batch keeps it. */
    id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{8,64}$/, "must be 8 to 64 characters of A-Z a-z 0-9 . _ : -"),
    /**
     * When the batch was made, in ms since the epoch; later with every batch of an origin, and
     * within `BATCH_WINDOW_MS` behind and `BATCH_AHEAD_MS` ahead of the router's clock.
     */
    at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    events: z.array(engineEvent).min(1).max(100),
  })
  .strict();

export type EngineEvent = z.infer<typeof engineEvent>;
export type EngineEventBatch = z.infer<typeof engineEventBatch>;
export type Health = Extract<EngineEvent, { type: "health" }>["status"];
export type PrefillRate = Omit<Extract<EngineEvent, { type: "prefill-rate" }>, "type">;
/** An engine's load report (running, waiting, KV usage): the shape every copy of one extends. */
export type LoadReport = Omit<Extract<EngineEvent, { type: "load" }>, "type">;
export type KvEvent = Extract<EngineEvent, { type: "kv-stored" | "kv-removed" }>;
