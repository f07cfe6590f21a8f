/** Worker thread of the edge benchmark: runs one task per message (edge-task.ts). */
import { serveTasks } from "../run/thread-pool.ts";
import { type EdgeTask, runEdgeTask } from "./edge-task.ts";

serveTasks(runEdgeTask, (task: EdgeTask) => `${task.kind} seed ${task.seed}`);
