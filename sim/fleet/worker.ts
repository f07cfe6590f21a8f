/**
 * Worker thread of the runner: replays one policy per message and posts progress and the result.
 * It keeps the last workload it built, since every message of one run names the same one.
 */
import { parentPort } from "node:worker_threads";
import type { Workload } from "../workload/workload.ts";
import { type BenchSpec, type PolicyRun, runPolicy, workloadOf } from "./runner.ts";

let cached: { key: string; workload: Workload } | null = null;

parentPort?.on("message", (task: { spec: BenchSpec; policy: PolicyRun; index: number }) => {
  const port = parentPort;
  if (!port) return;
  const { spec, policy, index } = task;
  try {
    const key = JSON.stringify(spec);
    if (cached?.key !== key) cached = { key, workload: workloadOf(spec) };
    const result = runPolicy(cached.workload, spec, policy, (completed) =>
      port.postMessage({ type: "progress", index, completed }),
    );
    port.postMessage({ type: "result", index, result });
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    port.postMessage({ type: "error", index, message: `${policy.label}: ${message}` });
  }
});
