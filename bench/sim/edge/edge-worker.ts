/** Worker thread of the edge benchmark: runs one task per message (edge-task.ts). */
import { serveTasks } from "../../../sim/fleet/thread-pool.ts";
import { type EdgeTask, runEdgeTask } from "./edge-task.ts";

serveTasks(runEdgeTask, (task: EdgeTask) => `${task.kind} seed ${task.seed}`);
