/**
 * How much of OpenAI Responses' stored-response affinity a pool keeps (docs/api.md, "Stored
 * responses"): which origin stored each response id, so a request naming it as
 * `previous_response_id` goes back there (src/core/responses/stored-responses.ts). Memory is
 * bounded by `maxEntries` (about 150 bytes each: the id, the origin, the time) and an entry
 * lives `ttlMs` after its response was stored. Engines keep stored responses in memory only
 * (vLLM's `OpenAIServingResponses.response_store`, with no expiry of its own), so the router
 * forgetting one sooner than the engine costs a 404 on a follow-up the engine could still have
 * answered; keeping one longer costs nothing but memory (the engine answers its own 404).
 */
import { z } from "zod";

export const storedResponseSettings = z
  .object({
    /** Response ids remembered per pool; past it the least recently stored are forgotten. */
    maxEntries: z.number().int().min(1).max(1_000_000).default(100_000),
    /** How long after it was stored a response id is remembered: 24 h by default. */
    ttlMs: z
      .number()
      .int()
      .min(1000)
      .max(30 * 86_400_000)
      .default(86_400_000),
  })
  .strict();

export type StoredResponseSettings = z.infer<typeof storedResponseSettings>;
