/**
 * A pool's coordination mode and the parameters of edge coordination (docs/architecture.md,
 * "Scale: two coordination modes"; the protocol is in src/core/edge). `object`: the pool's
 * Durable Object decides every request (two calls per request). `edge`: every isolate decides
 * with its own replica of the pool's state and reports in batches to a coordinator object,
 * whose answer carries what the other isolates did. Defaults are the simulator's choices
 * (bench/sim/README.md, "Edge coordination").
 */
import { z } from "zod";

export const COORDINATION_MODES = ["object", "edge"] as const;
export type Coordination = (typeof COORDINATION_MODES)[number];

export const edgeSettings = z
  .object({
    /** A replica syncs once it holds this many records (decisions, completions, failures). */
    flushRecords: z.number().int().min(1).max(100_000).default(256),
    /**
     * ... or once its oldest unsent record is this old (B). 100 ms: on the simulator (I = 32,
     * C = 4) 250 ms cost 10-40% more TTFT than 100 ms, and 25-50 ms gained little more
     * (bench/sim/README.md, "Edge coordination").
     */
    flushMs: z.number().int().min(10).max(30_000).default(100),
    /**
     * After a request, keep syncing every `flushMs` for this long even with nothing to report
     * (within the request's `waitUntil`, at most 30 s), so the view is fresh at the next
     * request; 0 syncs only to report.
     */
    warmMs: z.number().int().min(0).max(30_000).default(30_000),
    /**
     * Push: each warm isolate holds one WebSocket to its coordinator, which sends every socket
     * the same frame each tick (what changed), and the isolate sends its batches up it; `sync`
     * remains for a cold start, a gap and a closed socket. False: every isolate polls with
     * `sync` every `flushMs` while warm.
     */
    push: z.boolean().default(true),
    /** Coordinator objects per pool (S), each serving a group of colos; a root merges them. */
    coordinators: z.number().int().min(1).max(64).default(1),
    /** Each coordinator exchanges load and engine state with the root this often. */
    rootIntervalMs: z.number().int().min(50).max(60_000).default(500),
    /**
     * Distinct chunks a replica's index holds (its memory: 42-57 bytes each measured), LRU; less
     * while an isolate's pools ask more than its budget in all (replica-registry.ts).
     */
    replicaMaxChunks: z.number().int().min(1000).max(4_000_000).default(262_144),
    /** Distinct chunks in the summary a cold replica bootstraps from (most recent first). */
    bootstrapMaxChunks: z.number().int().min(1000).max(4_000_000).default(65_536),
    /** Records a coordinator keeps for deltas; a replica further behind gets a bootstrap. */
    logMaxRecords: z.number().int().min(1000).max(1_000_000).default(65_536),
    /**
     * Bytes of records one sync answer carries at most (counted from above: record-bytes.ts); a
     * replica further behind gets the oldest and syncs again at once for the rest. 256 KiB: the
     * p99 answer at 10,000 requests/s (S = 1) is 229 KB, so only a replica back from a blip is
     * cut (one answer then carried 60,000 records, 8.3 MB). A bootstrap's summary is bounded
     * apart, by `bootstrapMaxChunks`.
     */
    answerMaxBytes: z.number().int().min(16_384).max(16_777_216).default(262_144),
    /** Unsent records a replica keeps while its coordinator does not answer (oldest dropped). */
    bufferMaxRecords: z.number().int().min(100).max(1_000_000).default(20_000),
    /**
     * Replicas and coordinators index every `chunkStride`-th chunk hash: a prefix is named every
     * stride x chunkBytes bytes (512 tokens at the defaults), so every isolate's index, the CPU
     * it spends applying the pool's claims and the bytes of each claim shrink stride-fold, and
     * a match rounds down to that grain. 1 indexes every chunk, as the object does.
     */
    chunkStride: z.number().int().min(1).max(32).default(8),
    /** Index chunks (strides) past the shared prefix that key a request (ties, power of two). */
    keyChunks: z.number().int().min(1).max(64).default(1),
    /** Staleness past which a replica's view counts as no staler (degraded mode's cap). */
    maxStalenessMs: z.number().int().min(100).max(600_000).default(5000),
  })
  .strict();

export type EdgeSettings = z.infer<typeof edgeSettings>;

/** What a pool needs before it may coordinate at the edge, as issues naming the field. */
export function edgeIssues(pool: {
  coordination: Coordination;
  indexFeed: string;
  origins: readonly { role: string }[];
}): { path: (string | number)[]; message: string }[] {
  if (pool.coordination !== "edge") return [];
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (pool.indexFeed !== "router") {
    issues.push({
      path: ["indexFeed"],
      message: 'must be "router" with coordination "edge": replicas learn from decisions',
    });
  }
  if (pool.origins.some((o) => o.role !== "both")) {
    issues.push({
      path: ["coordination"],
      message: 'must be "object" for a pool with prefill or decode origins',
    });
  }
  return issues;
}
