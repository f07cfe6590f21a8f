/**
 * The capacity search's probes on worker threads (sim/fleet/thread-pool.ts). Each probe is a pure
 * function of its task; workers keep the workloads they built, since a search probes one
 * workload many times.
 */

import { ThreadPool } from "../../../sim/fleet/thread-pool.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type ProbeRecord, type ProbeTask, runProbe } from "./probe.ts";
import { baseWorkload } from "./workload-cache.ts";

export class ProbePool extends ThreadPool<ProbeTask, ProbeRecord> {
  constructor(threads: number) {
    const cache = new Map<string, Workload>();
    super(threads, new URL("./probe-worker.ts", import.meta.url), (task) =>
      runProbe(baseWorkload(cache, task.spec), task),
    );
  }
}
