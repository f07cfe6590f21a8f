/**
 * The edge benchmark's replays on worker threads (sim/fleet/thread-pool.ts). A task is a seed's
 * pair (edge-pair.ts) or one protocol replay at a pool rate (edge-rate.ts); each is a pure
 * function of itself, so which worker runs it never changes a result.
 */
import { ThreadPool } from "../../../sim/fleet/thread-pool.ts";
import { type EdgeTask, type EdgeTaskResult, runEdgeTask } from "./edge-task.ts";

export class EdgeTasks extends ThreadPool<EdgeTask, EdgeTaskResult> {
  constructor(threads: number) {
    super(threads, new URL("./edge-worker.ts", import.meta.url), runEdgeTask);
  }

  /** The result as the kind of task the caller sent. */
  override run<T extends EdgeTaskResult>(task: EdgeTask): Promise<T> {
    return super.run(task) as Promise<T>;
  }
}
