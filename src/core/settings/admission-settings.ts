/**
 * A pool's latency objective for admission (docs/api.md, "Admission"): past it, requests wait
 * at the router or are shed rather than queue at the engines. Absent from a pool's settings,
 * admission is off and every request is routed at once, as before it existed: shedding changes
 * what clients see (429/503 where they were served late), and the estimate it gates on is only
 * as good as the pool's `prefillTokensPerSecond`, so a pool opts in (`"admission": {}` takes
 * every default).
 */
import { z } from "zod";

export const admissionSettings = z
  .object({
    /**
     * The objective: a request is admitted to an origin while the pool's best origin would
     * start its prefill within this many ms (router/pool-wait.ts); past it, it waits here.
     */
    maxWaitMs: z.number().int().min(0).max(600_000).default(500),
    /**
     * Longest a request waits at the router; one that would wait longer (by the recent
     * admission rate) is shed at once, one still waiting then is shed.
     */
    queueTimeoutMs: z.number().int().min(0).max(120_000).default(500),
    /** Requests waiting at once; past it the fair share decides who is shed (docs/api.md). */
    maxQueued: z.number().int().min(0).max(100_000).default(1000),
  })
  .strict();

export type AdmissionSettings = z.infer<typeof admissionSettings>;
