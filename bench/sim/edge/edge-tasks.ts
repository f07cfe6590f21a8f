/**
 * Runs the edge benchmark's replays on at most `threads` worker threads (the machine has 2
 * cores), first come first served, or in this thread with `threads: 0` (tests). A task is a
 * seed's pair (edge-pair.ts) or one protocol replay at a pool rate (edge-rate.ts); each is a pure function
 * of itself, so which worker runs it never changes a result.
 */
import { Worker } from "node:worker_threads";
import { type EdgeTask, type EdgeTaskResult, runEdgeTask } from "./edge-task.ts";

type Reply = { id: number; result: EdgeTaskResult } | { id: number; error: string };

interface Pending {
  task: EdgeTask;
  resolve: (r: EdgeTaskResult) => void;
  reject: (e: Error) => void;
}

export class EdgeTasks {
  readonly #threads: number;
  readonly #idle: Worker[] = [];
  readonly #all: Worker[] = [];
  readonly #queue: { id: number; pending: Pending }[] = [];
  readonly #inFlight = new Map<number, Pending>();
  #nextId = 0;

  constructor(threads: number) {
    this.#threads = threads;
  }

  run<T extends EdgeTaskResult>(task: EdgeTask): Promise<T> {
    if (this.#threads === 0) {
      try {
        return Promise.resolve(runEdgeTask(task) as T);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise((resolve, reject) => {
      const resolveAs = resolve as (r: EdgeTaskResult) => void;
      this.#queue.push({ id: this.#nextId++, pending: { task, resolve: resolveAs, reject } });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((w) => w.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker = this.#idle.pop() ?? this.#spawn();
      if (!worker) return;
      const { id, pending } = this.#queue.shift() as { id: number; pending: Pending };
      this.#inFlight.set(id, pending);
      worker.postMessage({ id, task: pending.task });
    }
  }

  #spawn(): Worker | undefined {
    if (this.#all.length >= this.#threads) return undefined;
    const worker = new Worker(new URL("./edge-worker.ts", import.meta.url));
    this.#all.push(worker);
    worker.on("message", (reply: Reply) => {
      const pending = this.#inFlight.get(reply.id);
      this.#inFlight.delete(reply.id);
      this.#idle.push(worker);
      if ("error" in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve(reply.result);
      this.#dispatch();
    });
    worker.on("error", (error) => {
      for (const p of this.#inFlight.values()) p.reject(error);
      this.#inFlight.clear();
    });
    return worker;
  }
}
