/**
 * Engine webhook events: what an engine (or the reporter beside it) tells the router. The Worker
 * validates a batch with `engineEventBatch` and the core applies it with `CoreRouter.ingest`.
 *
 * - load:        running and waiting requests and KV usage in [0, 1] (vLLM's
 *                num_requests_running / num_requests_waiting / kv_cache_usage_perc).
 * - capacity:    KV cache size in tokens; sets the origin's capacity in the index.
 * - cache-reset: the engine restarted or cleared its prefix cache; the index forgets the origin.
 * - health:      up, draining (finish what runs, take nothing new) or down.
 */
import { z } from "zod";

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
    events: z.array(engineEvent).min(1).max(100),
  })
  .strict();

export type EngineEvent = z.infer<typeof engineEvent>;
export type EngineEventBatch = z.infer<typeof engineEventBatch>;
export type Health = Extract<EngineEvent, { type: "health" }>["status"];
