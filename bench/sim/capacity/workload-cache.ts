/**
 * The load-1 workloads a capacity run probes, built once per spec and kept (a few at a time:
 * searches of several seeds interleave, and a built trace is tens of megabytes).
 */

import { type BenchSpec, workloadOf } from "../../../sim/fleet/runner.ts";
import type { Workload } from "../../../sim/workload/workload.ts";

const KEEP = 6;

export function baseWorkload(cache: Map<string, Workload>, spec: BenchSpec): Workload {
  const key = JSON.stringify({ ...spec, load: 1 });
  let w = cache.get(key);
  if (w) {
    // Most recently used last, so the oldest goes first.
    cache.delete(key);
  } else {
    w = workloadOf({ ...spec, load: 1 });
    if (cache.size >= KEEP) cache.delete(cache.keys().next().value as string);
  }
  cache.set(key, w);
  return w;
}
