/** Worker thread of the probe pool: runs one probe per message, keeping the workloads it built. */
import { parentPort } from "node:worker_threads";
import type { Workload } from "../workload/workload.ts";
import { type ProbeTask, runProbe } from "./probe.ts";
import { baseWorkload } from "./workload-cache.ts";

const cache = new Map<string, Workload>();

parentPort?.on("message", ({ id, task }: { id: number; task: ProbeTask }) => {
  try {
    parentPort?.postMessage({ id, record: runProbe(baseWorkload(cache, task.spec), task) });
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    parentPort?.postMessage({ id, error: `${task.policy} at ${task.rateRps} req/s: ${message}` });
  }
});
