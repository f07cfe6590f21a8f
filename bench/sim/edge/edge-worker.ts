/** Worker thread of the edge benchmark: runs one task per message (edge-task.ts). */
import { parentPort } from "node:worker_threads";
import { type EdgeTask, runEdgeTask } from "./edge-task.ts";

parentPort?.on("message", ({ id, task }: { id: number; task: EdgeTask }) => {
  try {
    parentPort?.postMessage({ id, result: runEdgeTask(task) });
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    parentPort?.postMessage({ id, error: `${task.kind} seed ${task.seed}: ${message}` });
  }
});
