/** Worker thread of the probe pool: runs one probe per message, keeping the workloads it built. */

import { serveTasks } from "../../../sim/fleet/thread-pool.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import { type ProbeTask, runProbe } from "./probe.ts";
import { baseWorkload } from "./workload-cache.ts";

const cache = new Map<string, Workload>();

serveTasks(
  (task: ProbeTask) => runProbe(baseWorkload(cache, task.spec), task),
  (task) => `${task.policy} at ${task.rateRps} req/s`,
);
