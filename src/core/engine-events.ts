/**
 * Engine webhook events: what an engine (or the reporter beside it) tells the router. The Worker
 * validates a batch with `engineEventBatch` and the core applies it with `CoreRouter.ingest`.
 *
 * - load:        running and waiting requests and KV usage in [0, 1] (vLLM's
 *                num_requests_running / num_requests_waiting / kv_cache_usage_perc).
 * - capacity:    KV cache size in tokens; sets the origin's capacity in the index.
 * - cache-reset: the engine restarted or cleared its prefix cache; the index forgets the origin.
 * - health:      up, draining (finish what runs, take nothing new) or down.
 *
 * A batch carries its own `id` and the time it was made (`at`) inside the signed body, so the
 * pool can tell a replay or a late copy from a new report (`router/batch-ledger.ts`).
 */
import { z } from "zod";

/**
 * How far from the router's clock a batch's `at`, and its signature's timestamp, may be: 5
 * minutes, Stripe's default tolerance. Past it a batch is refused outright, which is what lets
 * the pool forget the ids of older batches.
 */
export const BATCH_WINDOW_MS = 300_000;

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
]);

export const engineEventBatch = z
  .object({
    origin: z.string().min(1).max(64),
    /** Unique per batch (the reporter sends a UUID); a retry of the batch keeps it. */
    id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{8,64}$/, "must be 8 to 64 characters of A-Z a-z 0-9 . _ : -"),
    /** When the batch was made, in ms since the epoch; later with every batch of an origin. */
    at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    events: z.array(engineEvent).min(1).max(100),
  })
  .strict();

export type EngineEvent = z.infer<typeof engineEvent>;
export type EngineEventBatch = z.infer<typeof engineEventBatch>;
export type Health = Extract<EngineEvent, { type: "health" }>["status"];
