/**
 * The replicas' memory as the edge front samples it: the largest index (bytes, chunks) and
 * queue any replica held, every MEMORY_SAMPLE_MS of the replay and once at its end. Sampled,
 * not tracked: a replica's stats cost O(origins), and there are many replicas.
 */
import type { EdgeReplica } from "../../src/core/edge/edge-replica.ts";
import type { EdgeCounters } from "./edge-counters.ts";
import type { EdgeWorld } from "./edge-world.ts";

const MEMORY_SAMPLE_MS = 30_000;

/** Raises the counters' maxima to what the replicas hold at `t`. */
export function measureMemory(replicas: readonly EdgeReplica[], c: EdgeCounters, t: number): void {
  for (const r of replicas) {
    const { index } = r.stats(t);
    c.replicaIndexBytes = Math.max(c.replicaIndexBytes, index.bytes);
    c.replicaIndexChunks = Math.max(c.replicaIndexChunks, index.chunks);
    c.replicaWaiting = Math.max(c.replicaWaiting, r.waiting.records);
  }
}

/** Samples every MEMORY_SAMPLE_MS until `done` says the replay has no requests left. */
export function sampleMemory(world: EdgeWorld, done: () => boolean): void {
  const { env, replicas, counters } = world;
  const sample = (t: number) => {
    if (done()) return;
    measureMemory(replicas, counters, t);
    env.schedule(t + MEMORY_SAMPLE_MS, sample);
  };
  env.schedule(MEMORY_SAMPLE_MS, sample);
}
